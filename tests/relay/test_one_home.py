"""One server per home, and the right vault every time: a second server on a served home
refuses to start; `memvault stop` finds the home's server wherever it listens; a relay or
a command whose environment names another home or vault than the running server's refuses,
naming both, and writes nothing there; a server a relay started says so."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest

from memvault import server_process
from tests.helpers import Server, free_port, wait_for
from tests.mcp.clients import relay_env
from tests.relay.lines import LineRelay, initialize

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")


def memvault(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "memvault.cli", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def save(relay: LineRelay, request_id: int, fact: str) -> dict:
    return relay.ask(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "memory_save", "arguments": {"project": "one", "facts": [fact]}},
        }
    )


def fragments(server: Server) -> int:
    return httpx.get(f"{server.url}/agentmemory/health", timeout=30).json()["vault"]["fragments"]


def test_a_second_server_on_a_served_home_refuses_naming_the_first(server, tmp_path):
    env = relay_env(server.home, MEMVAULT_PORT=str(free_port()))
    second = memvault("serve", env=env)
    assert second.returncode == 2, second.stderr
    assert server.process is not None
    said = " ".join(second.stderr.split())
    assert f"a memvault server (pid {server.process.pid}) already serves {server.home}" in said
    assert server.url in said and "memvault stop" in said
    assert server_process.read_pid_file(str(server.home)) == (server.process.pid, server.url)


def test_the_server_says_which_memory_it_serves(server):
    said = httpx.get(f"{server.url}/agentmemory/server", timeout=30).json()
    assert said["home"] == str(server.home.resolve())
    assert said["vault"] == str((server.home / "vault").resolve())
    assert said["vaultName"] == "vault" and said["startedBy"] is None
    assert server.process is not None and said["pid"] == server.process.pid


def test_a_relay_naming_another_vault_refuses_and_writes_nothing(server, tmp_path):
    other = tmp_path / "my-vault"
    other.mkdir()
    before = fragments(server)
    with LineRelay(server.home, MEMVAULT_URL=server.url, MEMVAULT_VAULT=str(other)) as relay:
        refused = relay.ask(initialize(1))
        message = refused["error"]["message"]
        assert message.startswith("refused: ") and str(other) in message
        assert str((server.home / "vault").resolve()) in message
        again = save(relay, 2, "never written into the other vault")
        assert "refused" in again["error"]["message"]
    stderr = (server.home / "relay-stderr.log").read_text()
    assert stderr.count("nothing was sent to it") == 1  # said once, not per request
    assert fragments(server) == before


def test_a_relay_naming_another_home_refuses(server, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    with LineRelay(elsewhere, MEMVAULT_URL=server.url) as relay:
        refused = relay.ask(initialize(1))
    message = refused["error"]["message"]
    assert f"serves home {server.home.resolve()}" in message
    assert f"this environment names home {elsewhere}" in message


def test_a_command_naming_another_home_refuses_naming_both(server, tmp_path):
    env = relay_env(tmp_path / "elsewhere", MEMVAULT_URL=server.url)
    before = fragments(server)
    saved = memvault("save", "--summary", "a fact", "--project", "one", env=env)
    assert saved.returncode == 2, saved.stdout + saved.stderr
    said = " ".join(saved.stderr.split())
    assert "refused" in said and str(server.home.resolve()) in said
    assert str(tmp_path / "elsewhere") in said
    assert fragments(server) == before


def test_stop_finds_the_homes_server_without_its_pid_file(tmp_path):
    server = Server(tmp_path / "home").start()
    try:
        (server.home / "server.pid").unlink()
        stopped = memvault("stop", env=relay_env(server.home))  # the default port: not it
        assert stopped.returncode == 0, stopped.stderr
        assert f"stopped the memvault server at {server.url}" in stopped.stdout
        assert server.process is not None
        server.process.wait(30)
    finally:
        server.kill()


def test_a_server_a_relay_started_says_so_and_serve_says_how_to_stop_it(tmp_path):
    home = tmp_path / "home"
    port = str(free_port())
    env = relay_env(home, MEMVAULT_PORT=port)
    try:
        with LineRelay(home, MEMVAULT_PORT=port) as relay:
            assert relay.ask(initialize(1))["result"]["serverInfo"]["name"] == "memvault"
        log = (home / "logs" / "server.log").read_text()
        assert "started in the background by memvault mcp (pid" in log
        status = memvault("status", env=env)
        assert status.returncode == 0, status.stderr
        said = " ".join(status.stdout.split())
        assert "started in the background by memvault mcp" in said
        assert f"vault folder {home / 'vault'}: open it in Obsidian" in said
        again = memvault("serve", env=env)
        assert again.returncode == 2
        refused = " ".join(again.stderr.split())
        assert "started in the background by memvault mcp" in refused
        assert "memvault stop" in refused and "in use" not in refused
    finally:
        stopped = memvault("stop", env=env)
        assert stopped.returncode == 0, stopped.stderr


def test_serve_on_a_port_another_homes_server_holds_names_that_home(server, tmp_path):
    env = relay_env(tmp_path / "mine", MEMVAULT_PORT=str(server.port))
    refused = memvault("serve", env=env)
    assert refused.returncode == 2
    said = " ".join(refused.stderr.split())
    assert f"serves another home there, {server.home.resolve()}" in said
    assert f"MEMVAULT_HOME={server.home.resolve()} memvault stop" in said
    wait_for(lambda: server_process.serving(str(tmp_path / "mine")) is None)
