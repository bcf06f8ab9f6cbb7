"""The real Claude Code CLI, at the registry's newest build and at the build npm installs
under Node 20, registers ``memvault mcp`` as a stdio server and calls memvault's
``memory_search`` through it: the model (a scripted one on loopback) gets the tool's
result back.

A newer build speaks the 2026-07-28 revision: ``server/discover``, then a
``subscriptions/listen`` whose acknowledgement it waits for before it counts the server
connected. A relay that held the stream's events back until the stream ended left such a
host waiting for its own timeout (about 27 s) and its tools unavailable meanwhile.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.mcp.clients import RELAY
from tests.relay.claude_code import (
    ANSWER_PREFIX,
    NODE_20_DEFAULT,
    SEARCH_TOOL,
    ScriptedModel,
    install,
    newest_version,
)
from tests.relay.lines import LineRelay

WORD = "kestrelmq"
FACT = f"queue: the billing service moved to {WORD} in March"
CONNECTED = re.compile(
    r'MCP server "memvault": Successfully connected \(transport: stdio\) in (\d+)ms'
)
CONNECT_LIMIT_MS = 15_000  # ample for a relay that answers at once; short of the host's wait


@pytest.fixture(scope="module")
def remembered(server):
    """The server, with a fragment the model's search will find."""
    with LineRelay(server.home, MEMVAULT_URL=server.url) as relay:
        saved = relay.ask(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "memory_save",
                    "arguments": {"project": "claude-code-app", "facts": [FACT]},
                },
            }
        )
    assert saved["result"]["isError"] is False, saved
    return server


@pytest.mark.slow
@pytest.mark.timeout(900)  # the first run installs the CLI from npm
@pytest.mark.parametrize("build", ["newest", "node-20-default"])
def test_claude_code_calls_memory_search_through_the_stdio_relay(remembered, tmp_path, build):
    version = newest_version() if build == "newest" else NODE_20_DEFAULT
    program = install(version)
    user, project = tmp_path / "user", tmp_path / "project"
    user.mkdir()
    project.mkdir()
    relay_env = {
        "MEMVAULT_URL": remembered.url,
        "MEMVAULT_HOME": str(remembered.home),
        "MEMVAULT_EMBEDDINGS": "none",
    }
    memvault = {"type": "stdio", "command": RELAY[0], "args": RELAY[1:], "env": relay_env}
    config = project / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"memvault": memvault}}))

    with ScriptedModel(query=WORD) as model:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(user),
            "TMPDIR": str(tmp_path),
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "sk-ant-scripted",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
        done = subprocess.run(
            [
                str(program),
                "-p",
                f"What does memvault remember about {WORD}?",
                "--mcp-config",
                str(config),
                "--strict-mcp-config",
                "--allowedTools",
                SEARCH_TOOL,
                "--output-format",
                "stream-json",
                "--verbose",
                "--debug",
                "--model",
                "claude-sonnet-4-5",
            ],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
        )
        results = model.tool_results
    assert done.returncode == 0, f"claude {version} exited {done.returncode}: {done.stderr[-3000:]}"
    messages = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    (init,) = [m for m in messages if m.get("type") == "system" and m.get("subtype") == "init"]
    assert init["claude_code_version"] == version
    assert {"name": "memvault", "status": "connected"}.items() <= _server(init).items(), init

    # The model's call reached memvault and its answer came back to the model.
    assert len(results) == 1, f"the model got no result of {SEARCH_TOOL}: {done.stdout[-3000:]}"
    assert not results[0].get("is_error"), results[0]
    assert FACT in json.dumps(results[0], ensure_ascii=False)
    (final,) = [m for m in messages if m.get("type") == "result"]
    assert final["is_error"] is False and final["result"].startswith(ANSWER_PREFIX), final

    # Connected at once: the host did not wait in vain for a listen acknowledgement.
    logs = list((user / ".claude" / "debug").glob("*.txt"))
    connected = [int(m) for log in logs for m in CONNECTED.findall(log.read_text(errors="replace"))]
    assert connected, f"no connection line in the host's debug log {logs}"
    assert max(connected) < CONNECT_LIMIT_MS, f"memvault connected after {max(connected)} ms"


def _server(init: dict) -> dict:
    return next((s for s in init.get("mcp_servers", []) if s.get("name") == "memvault"), {})
