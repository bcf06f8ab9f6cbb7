"""A server started on demand: exactly one for several relays starting at once, recorded in
``server.pid``, logging to ``logs/server.log``, ended by ``memvault stop``; the hook never
starts one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from memvault import server_process
from tests.helpers import Server, free_port, wait_for
from tests.hooks.runner import fixture, hook_env, placed, run_hook, spooled
from tests.mcp.clients import TOOL_NAMES, relay_env, stdio
from tests.relay.lines import LineRelay, initialize

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")


def servers_for(home: Path) -> list[int]:
    """The pids of `memvault serve` processes running for ``home``."""
    wanted = f"MEMVAULT_HOME={home}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        serving = b"memvault.cli" in cmdline and b"serve" in cmdline and wanted in environ
        if serving and server_process.running(int(entry)):
            found.append(int(entry))
    return found


def memvault(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "memvault.cli", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_three_relays_started_at_once_with_no_server_make_one_server(started):
    port = str(free_port())

    async def one(n: int) -> set[str]:
        async with stdio(started, log=f"relay-{n}.log", MEMVAULT_PORT=port) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    async def main() -> list[set[str]]:
        listed: list[set[str]] = []

        async def run(n: int) -> None:
            listed.append(await one(n))

        async with anyio.create_task_group() as group:
            for n in range(3):
                group.start_soon(run, n)
        return listed

    assert anyio.run(main) == [TOOL_NAMES] * 3
    recorded = server_process.read_pid_file(str(started))
    assert recorded is not None
    assert servers_for(started) == [recorded[0]]
    assert recorded[1] == f"http://127.0.0.1:{port}"
    assert "memvault" in (started / "logs" / "server.log").read_text()

    stopped = memvault("stop", env=relay_env(started, MEMVAULT_PORT=port))
    assert stopped.returncode == 0, stopped.stderr
    assert f"stopped the memvault server at http://127.0.0.1:{port}" in stopped.stdout
    assert not (started / "server.pid").exists()
    assert servers_for(started) == []


def test_memvault_stop_with_no_server_says_so_and_removes_a_stale_pid_file(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = relay_env(home, MEMVAULT_PORT=str(free_port()))
    none = memvault("stop", env=env)
    assert none.returncode == 0
    assert "no memvault server is running (no server.pid in" in none.stdout

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (home / "server.pid").write_text(f"{gone.pid}\nhttp://127.0.0.1:1\n")
    stale = memvault("stop", env=env)
    assert stale.returncode == 0
    assert f"removed a stale {home / 'server.pid'}, pid {gone.pid}" in stale.stdout
    assert not (home / "server.pid").exists()


def test_a_server_in_the_foreground_records_its_pid_while_it_runs(tmp_path):
    server = Server(tmp_path / "home").start()
    try:
        assert server.process is not None
        recorded = server_process.read_pid_file(str(server.home))
        assert recorded == (server.process.pid, server.url)
    finally:
        server.stop()
    assert not (server.home / "server.pid").exists()


def test_a_server_that_goes_away_is_an_error_then_the_next_request_starts_one(started):
    server = Server(started).start()
    port = str(server.port)
    try:
        with LineRelay(started, MEMVAULT_PORT=port) as relay:
            assert relay.ask(initialize(1))["result"]["serverInfo"]["name"] == "memvault"
            server.stop()
            lost = relay.ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            assert lost["error"]["code"] == -32000
            assert (
                f"the memvault server at http://127.0.0.1:{port} did not answer"
                in (lost["error"]["message"])
            )
            again = relay.ask({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
            assert {tool["name"] for tool in again["result"]["tools"]} == TOOL_NAMES
    finally:
        server.kill()
    assert len(servers_for(started)) == 1  # started by the relay, ended by the fixture


def test_a_server_that_cannot_start_is_an_error_naming_its_log_and_the_log_rotates(tmp_path):
    home = tmp_path / "home"
    logs = home / "logs"
    logs.mkdir(parents=True)
    (logs / "server.log").write_bytes(b"x" * (server_process.LOG_LIMIT + 1))
    for n in (1, 2, 3):
        (logs / f"server.log.{n}").write_text(f"old {n}\n")
    not_a_folder = tmp_path / "vault.txt"
    not_a_folder.write_text("")
    settings = {"MEMVAULT_PORT": str(free_port()), "MEMVAULT_VAULT": str(not_a_folder)}
    with LineRelay(home, **settings) as relay:
        failed = relay.ask(initialize(1))
    message = failed["error"]["message"]
    assert f"exited with status 2; see {logs / 'server.log'}" in message
    assert "is not a folder" in message  # the log's last lines say why
    assert (logs / "server.log.1").stat().st_size == server_process.LOG_LIMIT + 1
    assert (logs / "server.log.2").read_text() == "old 1\n"
    assert (logs / "server.log.3").read_text() == "old 2\n"
    assert not (logs / "server.log.4").exists()
    assert not (home / "server.pid").exists() or not server_process.running(
        server_process.read_pid_file(str(home))[0]  # type: ignore[index]
    )


def test_the_hook_with_no_server_spools_and_starts_nothing(tmp_path):
    home = tmp_path / "home"
    project = tmp_path / "demo-app"
    project.mkdir()
    port = free_port()
    env = hook_env(home, f"http://127.0.0.1:{port}", MEMVAULT_PORT=str(port))
    run_hook("claude-code", placed(fixture("claude-code", "UserPromptSubmit"), project), env)
    assert len(spooled(home)) == 1
    assert not (home / "server.pid").exists()
    assert servers_for(home) == []
    assert not server_process.answers(f"http://127.0.0.1:{port}")


def test_concurrent_starts_wait_on_the_lock_rather_than_start_a_second_server(started):
    """A start already under way (its pid recorded, not yet listening) is waited for."""
    port = str(free_port())
    env = relay_env(started, MEMVAULT_PORT=port)
    first = subprocess.Popen([sys.executable, "-m", "memvault.cli", "serve"], env=env)
    started.mkdir(parents=True, exist_ok=True)
    server_process.write_pid_file(str(started), first.pid, f"http://127.0.0.1:{port}")
    try:
        url = server_process.ensure_running(env)
        assert url == f"http://127.0.0.1:{port}"
        wait_for(lambda: servers_for(started) == [first.pid], timeout=30)
    finally:
        first.terminate()
        first.wait(30)
