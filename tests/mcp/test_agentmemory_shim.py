"""agentmemory's published MCP shim, run with node as a host would run it, against memvault.

The shim is ``dist/standalone.mjs`` of the npm package ``@agentmemory/agentmemory@0.9.29``
(fetched at test time, never committed). It is a stdio MCP server that forwards to the
server at ``AGENTMEMORY_URL``: tools/list to ``GET /agentmemory/mcp/tools``, and tools/call
to ``POST /agentmemory/mcp/call``, except for a few tools it sends to agentmemory's plain
REST routes itself (``memory_save`` → ``/remember``, ``memory_recall`` → ``/search``).
The official Python MCP client drives it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.helpers import agentmemory_package, npm_pack, require_tool
from tests.mcp.clients import TOOL_NAMES, call, text


def agentmemory_shim() -> Path:
    """The shim's script, with the one package it imports (picocolors, at the range the
    package declares) unpacked beside it: the published tarball carries no dependencies."""
    root = agentmemory_package()
    target = root / "node_modules" / "picocolors"
    if not (target / "package.json").exists():
        wanted = json.loads((root / "package.json").read_text())["dependencies"]["picocolors"]
        npm_pack(require_tool("npm"), f"picocolors@{wanted}", target)
    return root / "dist" / "standalone.mjs"


@pytest.fixture(scope="module")
def shim():
    return agentmemory_shim()


@asynccontextmanager
async def shim_client(shim: Path, server, home: Path) -> AsyncIterator[Client]:
    home.mkdir(parents=True, exist_ok=True)
    params = StdioServerParameters(
        command=require_tool("node"),
        args=[str(shim)],
        # HOME: the shim keeps a fallback store under ~/.agentmemory; not the real one.
        env={"AGENTMEMORY_URL": server.url, "HOME": str(home)},
    )
    with (home / "shim-stderr.log").open("w") as errors:
        async with Client(stdio_client(params, errlog=errors), mode="legacy") as client:
            yield client


def test_the_shim_lists_and_calls_memvault_tools(shim, server, vault, tmp_path):
    async def main() -> None:
        async with shim_client(shim, server, tmp_path / "node-home") as client:
            assert client.server_info is not None and client.server_info.name == "agentmemory"
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} == TOOL_NAMES
            update = next(t for t in listed.tools if t.name == "memory_session_update")
            assert "更新 memory session" in (update.description or "")

            # The shim sends memory_save to /remember itself.
            saved = await call(
                client,
                "memory_save",
                {
                    "content": "Feature flags live in LaunchDarkly, not in env vars.",
                    "type": "decision",
                    "concepts": "feature-flags",
                    "project": "shim-app",
                },
            )
            remembered = json.loads(text(saved))
            assert remembered["success"] is True
            written = (vault / remembered["path"]).read_text(encoding="utf-8")
            assert "project: shim-app" in written
            assert "- feature-flags" in written

            # Everything else goes through /agentmemory/mcp/call.
            found = await call(client, "memory_search", {"query": "launchdarkly flags"})
            assert remembered["memory"]["id"] in text(found)

            read = await call(client, "memory_get", {"id": remembered["memory"]["id"]})
            assert "Feature flags live in LaunchDarkly" in text(read)

            registered = await call(
                client, "memory_session_register", {"topic": "flags through the shim"}
            )
            first_line = text(registered).splitlines()[0]
            assert first_line.startswith("Your Memory Session ID is: ")
            session_id = first_line.rsplit(" ", 1)[1]
            index = (vault / "memory" / "index.md").read_text(encoding="utf-8")
            assert f"| {session_id} |" in index

            await call(
                client,
                "memory_session_update",
                {"session_id": session_id, "sections": {"Decisions": ["flags in LaunchDarkly"]}},
            )
            snapshot = vault / "memory" / "sessions" / f"{session_id}.md"
            assert "- flags in LaunchDarkly" in snapshot.read_text(encoding="utf-8")

            # memory_recall is a search in agentmemory; the shim asks /search.
            recalled = await call(client, "memory_recall", {"query": "launchdarkly"})
            ids = [r["id"] for r in json.loads(text(recalled))["results"]]
            assert remembered["memory"]["id"] in ids

            refused = await client.call_tool("memory_get", {"id": "nothing - 2026-01-01 - here"})
            assert refused.is_error
            assert "/agentmemory/mcp/call -> 404" in text(refused)

            unknown = await client.call_tool("memory_lesson_save", {"content": "x"})
            assert unknown.is_error
            assert "/agentmemory/mcp/call -> 400" in text(unknown)

    anyio.run(main)
    log = (tmp_path / "node-home" / "shim-stderr.log").read_text()
    assert f"proxying to agentmemory server at {server.url}" in log
    assert "LOCAL FALLBACK" not in log
