"""``memvault mcp`` relays to one running server: the official MCP client over stdio, every
protocol revision hosts send, two relays at once, and no relay holding the store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.mcp.clients import TOOL_NAMES, call, remember_and_register, stdio
from tests.relay.lines import MODERN, LineRelay, initialize, modern_meta

SOURCE = str(Path(__file__).resolve().parents[2] / "src")


def test_the_official_client_saves_searches_and_registers_through_the_relay(server):
    async def main() -> None:
        async with stdio(server.home, MEMVAULT_URL=server.url) as client:
            assert client.server_info is not None and client.server_info.name == "memvault"
            await remember_and_register(client, server.home / "vault", "relay-app")

    anyio.run(main)


@pytest.mark.parametrize("mode", ["auto", MODERN])
def test_a_client_speaking_the_2026_revision_gets_its_tools(server, mode):
    async def main() -> None:
        async with stdio(server.home, mode=mode, MEMVAULT_URL=server.url) as client:
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} == TOOL_NAMES
            found = await call(client, "memory_search", {"query": "anything at all"})
            assert found.structured_content["query"] == "anything at all"

    anyio.run(main)


def test_a_discover_probe_then_initialize_on_one_connection_are_both_answered(server):
    with LineRelay(server.home, MEMVAULT_URL=server.url) as relay:
        probe = relay.ask(
            {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": modern_meta()}
        )
        assert MODERN in probe["result"]["supportedVersions"], probe
        started = relay.ask(initialize(2, "2025-06-18"))
        assert started["result"]["protocolVersion"] == "2025-06-18", started
        assert started["result"]["serverInfo"]["name"] == "memvault"
        relay.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = relay.ask({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        assert {tool["name"] for tool in listed["result"]["tools"]} == TOOL_NAMES


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_initialize_is_answered_for_every_handshake_revision(server, version):
    with LineRelay(server.home, MEMVAULT_URL=server.url) as relay:
        started = relay.ask(initialize(1, version))
        assert started["result"]["protocolVersion"] == version, started


def test_a_line_that_is_not_json_is_a_parse_error_and_the_relay_goes_on(server):
    with LineRelay(server.home, MEMVAULT_URL=server.url) as relay:
        relay.send(b"{not json")
        assert relay.read(None)["error"]["code"] == -32700
        assert relay.ask(initialize(7))["result"]["serverInfo"]["name"] == "memvault"


def test_a_line_nested_too_deeply_is_a_parse_error_and_the_relay_goes_on(server):
    with LineRelay(server.home, MEMVAULT_URL=server.url) as relay:
        relay.send(b"[" * 200_000)
        refused = relay.read(None)
        assert refused["error"]["code"] == -32700, refused
        assert "nested too deeply" in refused["error"]["message"]
        assert relay.ask(initialize(8))["result"]["serverInfo"]["name"] == "memvault"


def test_two_relays_at_once_share_one_server(server):
    async def main() -> None:
        async with (
            stdio(server.home, log="first.log", MEMVAULT_URL=server.url) as first,
            stdio(server.home, log="second.log", MEMVAULT_URL=server.url) as second,
        ):
            facts = ["queue: the relay pair test saw rabbitmq 3.13"]
            await call(first, "memory_save", {"project": "pair-app", "facts": facts})
            query = {"query": "rabbitmq", "project": "pair-app"}
            found = await call(second, "memory_search", query)
            assert [r["project"] for r in found.structured_content["results"]] == ["pair-app"]

    anyio.run(main)


def _open_store_files(pid: int) -> list[str]:
    """The memvault.db files (and -wal, -shm) process ``pid`` holds open."""
    held = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if os.path.basename(target).startswith("memvault.db"):
            held.append(target)
    return held


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_no_relay_holds_the_store_open_while_the_server_does(server):
    with (
        LineRelay(server.home, MEMVAULT_URL=server.url) as first,
        LineRelay(server.home, MEMVAULT_URL=server.url) as second,
    ):
        for relay in (first, second):
            relay.ask(initialize(1))
            saved = relay.ask(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {
                        "name": "memory_save",
                        "arguments": {"project": "fd-app", "facts": ["fd: no relay holds it"]},
                    },
                }
            )
            assert saved["result"]["isError"] is False, saved
            assert _open_store_files(relay.process.pid) == []
        assert server.process is not None
        assert _open_store_files(server.process.pid)  # the check sees what a holder holds


def test_the_relay_imports_only_the_standard_library(server):
    """Run with ``-S`` (no site packages): whatever else it needed would fail to import."""
    code = (
        "import sys\n"
        f"sys.path.insert(0, {SOURCE!r})\n"
        "from memvault.relay import main\n"
        "status = main()\n"
        "sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules)))\n"
    )
    # The server's own home: a relay naming another home refuses before relaying anything.
    relay = LineRelay(server.home, [sys.executable, "-S", "-c", code], MEMVAULT_URL=server.url)
    with relay:
        assert relay.ask(initialize(1))["result"]["serverInfo"]["name"] == "memvault"
        assert relay.process.stdin is not None
        relay.process.stdin.close()
        assert relay.process.wait(30) == 0
    modules = (server.home / "relay-stderr.log").read_text().split("MODULES ", 1)[1].split()
    ours = {m for m in modules if m.split(".")[0] == "memvault"}
    light = ("memvault.hook", "memvault.relay", "memvault.server_process", "memvault.platforms")
    assert {m for m in ours if not m.startswith(light)} <= {"memvault"}
    others = {m.split(".")[0] for m in modules} - {"memvault", "__main__"}
    assert others <= sys.stdlib_module_names, others - sys.stdlib_module_names


@pytest.mark.parametrize("ending", ["SIGINT", "SIGTERM", "stdin closed"])
def test_the_relay_ends_on_a_signal_or_when_stdin_closes(server, ending):
    with LineRelay(server.home, MEMVAULT_URL=server.url) as relay:
        relay.ask(initialize(1))  # up and serving: not ended before it began
        if ending == "stdin closed":
            assert relay.process.stdin is not None
            relay.process.stdin.close()
        else:
            relay.process.send_signal(getattr(signal, ending))
        try:
            status = relay.process.wait(30)  # a generous bound: the point is that it ends
        except subprocess.TimeoutExpired:
            pytest.fail(f"the relay was still running 30 s after {ending}")
        expected = 0 if ending == "stdin closed" else 128 + getattr(signal, ending)
        assert status == expected
