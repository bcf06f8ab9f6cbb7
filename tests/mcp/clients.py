"""Connecting the official MCP client to memvault, and the flow every transport must pass."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from memvault.mcp_server import TOOLS

TOOL_NAMES = {entry.name for entry in TOOLS}


# What a host runs: the console script's light entry point, not the full CLI.
RELAY = [sys.executable, "-m", "memvault.cli.entry", "mcp"]


def relay_env(home: Path, **settings: str) -> dict[str, str]:
    """A clean environment naming ``home``: none of the runner's own memvault settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "AGENTMEMORY_"))}
    return {**env, "MEMVAULT_HOME": str(home), "MEMVAULT_EMBEDDINGS": "none", **settings}


@asynccontextmanager
async def stdio(
    home: Path, *, mode: str = "legacy", log: str = "mcp-stderr.log", **settings: str
) -> AsyncIterator[Client]:
    """``memvault mcp`` as a host starts it: a child process speaking MCP on stdio, relaying
    to the server that ``settings`` (MEMVAULT_URL, MEMVAULT_PORT) name for ``home``."""
    env = relay_env(home, **settings)
    params = StdioServerParameters(command=RELAY[0], args=RELAY[1:], env=env)
    home.mkdir(parents=True, exist_ok=True)
    with (home / log).open("w") as errors:
        async with Client(stdio_client(params, errlog=errors), mode=mode) as client:
            yield client


@asynccontextmanager
async def http(
    url: str, *, secret: str | None = None, mode: str = "legacy"
) -> AsyncIterator[Client]:
    """The streamable HTTP endpoint of a running server."""
    headers = {"Authorization": f"Bearer {secret}"} if secret else None
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as transport,
        Client(streamable_http_client(f"{url}/mcp", http_client=transport), mode=mode) as client,
    ):
        yield client


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def call(client: Client, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """Call a tool that must succeed."""
    result = await client.call_tool(name, arguments)
    assert not result.is_error, f"{name} failed: {text(result)}"
    return result


async def remember_and_register(client: Client, vault: Path, project: str) -> str:
    """List the tools, then save → search → get → register → update, checking each answer
    and the vault files it leaves. Returns the registered Memory Session ID."""
    listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} == TOOL_NAMES

    saved = await call(
        client,
        "memory_save",
        {
            "project": project,
            "summary": "Gateway retries use exponential backoff capped at 30 s.",
            "facts": [
                "retry: exponential backoff, base 0.5 s",
                "cap: 30 s ∵ the gateway drops requests after 60 s",
            ],
            "importance": 0.8,
            "tags": ["networking"],
        },
    )
    fragment_id = saved.structured_content["id"]
    assert saved.structured_content["action"] == "created"
    assert f"id: {fragment_id}" in text(saved)
    written = (vault / saved.structured_content["path"]).read_text(encoding="utf-8")
    assert f"project: {project}" in written
    assert "- cap: 30 s ∵ the gateway drops requests after 60 s" in written
    assert "networking" in written

    found = await call(client, "memory_search", {"query": "gateway backoff", "project": project})
    first = found.structured_content["results"][0]
    assert (first["kind"], first["id"]) == ("fragment", fragment_id)
    assert fragment_id in text(found)

    read = await call(client, "memory_get", {"id": fragment_id})
    assert "retry: exponential backoff, base 0.5 s" in read.structured_content["body"]
    assert read.structured_content["properties"]["importance"] == 0.8
    assert "cap: 30 s" in text(read)

    registered = await call(
        client,
        "memory_session_register",
        {
            "agent_name": "claude-code-main-agent",
            "topic": "gateway retry policy",
            "sections": {
                "Current Context": "Designing the gateway client's retry policy.",
                "Decisions": ["exponential backoff"],
            },
        },
    )
    session_id = registered.structured_content["sessionId"]
    assert session_id.endswith("-claude-code-main-agent")
    assert text(registered).splitlines()[0] == f"Your Memory Session ID is: {session_id}"
    assert _row(vault, session_id)[5] == "active"
    assert _row(vault, session_id)[2] == "gateway retry policy"

    updated = await call(
        client,
        "memory_session_update",
        {
            "session_id": session_id,
            "sections": {"Decisions": ["cap at 30 s"], "Next Actions": ["load-test the gateway"]},
        },
    )
    assert updated.structured_content["ok"] is True
    snapshot = (vault / "memory" / "sessions" / f"{session_id}.md").read_text(encoding="utf-8")
    decisions = snapshot.split("## Decisions", 1)[1].split("##", 1)[0]
    assert "- exponential backoff" in decisions  # the merge keeps what was there
    assert "- cap at 30 s" in decisions
    assert "- load-test the gateway" in snapshot
    assert _row(vault, session_id)[8] == updated.structured_content["updatedAt"]
    return session_id


def _row(vault: Path, session_id: str) -> list[str]:
    """A board row's cells, read from memory/index.md."""
    for line in (vault / "memory" / "index.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] == session_id:
            return cells
    raise AssertionError(f"{session_id} is not on the board")
