"""The streamable HTTP endpoint inside `memvault serve`, driven by the official MCP client."""

from __future__ import annotations

import anyio
import httpx
from mcp.shared.exceptions import MCPError

from tests.helpers import Server, envelope
from tests.mcp.clients import TOOL_NAMES, call, http, remember_and_register, text


def test_save_search_get_register_update_over_http(server, vault):
    async def main() -> None:
        async with http(server.url) as client:
            session_id = await remember_and_register(client, vault, "http-app")
            listed = await call(client, "memory_sessions", {"status": "active"})
            assert session_id in [row["sessionId"] for row in listed.structured_content["sessions"]]

    anyio.run(main)


def test_the_newest_protocol_revision_works_too(server):
    async def main() -> None:
        async with http(server.url, mode="auto") as client:
            assert client.protocol_version >= "2026-07-28"
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} == TOOL_NAMES
            recalled = await call(client, "memory_recall", {"query": "anything at all"})
            assert text(recalled).startswith("📖 agent memory：")

    anyio.run(main)


def _observe(server, session: str, project: str, minutes: range) -> None:
    for minute in minutes:
        body = envelope(
            session,
            minute,
            project=project,
            timestamp=f"2026-11-30T10:{minute:02d}:00.000Z",
        )
        response = httpx.post(f"{server.url}/agentmemory/observe", json=body)
        assert response.status_code == 201, response.text


def test_timeline_shows_a_sessions_latest_observations_oldest_first(server):
    _observe(server, "tl-one", "timeline-app", range(0, 25))
    _observe(server, "tl-two", "timeline-app", range(30, 35))
    started = httpx.post(
        f"{server.url}/agentmemory/session/start",
        json={"sessionId": "tl-one", "project": "timeline-app", "cwd": "/code/timeline-app"},
    ).json()
    memory_session_id = started["memorySessionId"]

    async def main() -> None:
        async with http(server.url) as client:
            by_host = await call(client, "memory_timeline", {"session_id": "tl-one", "limit": 10})
            seen = by_host.structured_content["observations"]
            assert [o["eventId"] for o in seen] == [f"tl-one-e{n}" for n in range(15, 25)]
            assert by_host.structured_content["truncated"] is True
            assert "the last 10 observations, oldest first" in text(by_host)

            by_board = await call(
                client, "memory_timeline", {"session_id": memory_session_id, "limit": 10}
            )
            assert by_board.structured_content["observations"] == seen
            (header,) = by_board.structured_content["sessions"]
            assert (header["id"], header["memorySessionId"]) == ("tl-one", memory_session_id)

            project = await call(client, "memory_timeline", {"project": "timeline-app", "limit": 8})
            events = [o["eventId"] for o in project.structured_content["observations"]]
            assert events == [f"tl-one-e{n}" for n in (22, 23, 24)] + [
                f"tl-two-e{n}" for n in range(30, 35)
            ]
            assert {s["id"] for s in project.structured_content["sessions"]} == {
                "tl-one",
                "tl-two",
            }

            unknown = await client.call_tool("memory_timeline", {"session_id": "no-such-session"})
            assert unknown.is_error and "no session 'no-such-session'" in text(unknown)

    anyio.run(main)


def test_the_endpoint_needs_the_secret_when_one_is_set(tmp_path):
    secured = Server(tmp_path / "home", {"MEMVAULT_SECRET": "mcp-secret"}).start()
    try:
        bare = httpx.post(
            f"{secured.url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
        assert bare.status_code == 401
        assert bare.json() == {"error": "unauthorized"}

        async def main() -> None:
            async with http(secured.url, secret="mcp-secret") as client:
                saved = await call(
                    client, "memory_save", {"project": "locked", "facts": ["door: locked"]}
                )
                assert saved.structured_content["action"] == "created"
            refused = False
            try:
                async with http(secured.url, secret="wrong") as client:
                    await client.list_tools()
            except* MCPError:
                refused = True
            assert refused

        anyio.run(main)
    finally:
        secured.stop()


def test_only_posts_from_a_local_host_are_served(server):
    # Stateless: no stream of the server's own to offer, so GET is declined as MCP provides.
    assert httpx.get(f"{server.url}/mcp").status_code == 405
    foreign = httpx.post(
        f"{server.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Host": "memory.example.com", "Accept": "application/json, text/event-stream"},
    )
    assert foreign.status_code == 421  # the SDK's guard against DNS rebinding


def test_text_no_store_can_hold_is_a_tool_error_naming_it_over_the_streamable_endpoint(server):
    # The rule REST keeps (a NUL is refused by name, on either engine) holds for the MCP
    # endpoint's tool calls too: nothing reaches the store.
    async def main() -> None:
        async with http(server.url) as client:
            result = await client.call_tool(
                "memory_save", {"content": "a\u0000b", "project": "nul-app"}
            )
            assert result.is_error
            assert "content" in text(result) and "U+0000" in text(result)
            found = await call(client, "memory_search", {"query": "nul-app", "limit": 5})
            assert "a\u0000b" not in text(found)

    anyio.run(main)
