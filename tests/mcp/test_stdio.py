"""`memvault mcp` over stdio, driven by the official MCP client as a host would drive it:
the relay in front of a server of the test's own."""

from __future__ import annotations

import anyio
import pytest

from tests.helpers import Server
from tests.mcp.clients import call, remember_and_register, stdio, text


@pytest.fixture
def own_server(tmp_path):
    """A server for one test, whose vault holds only what that test wrote."""
    running = Server(tmp_path / "home").start()
    yield running
    running.stop()


def test_save_search_get_register_update_over_stdio(own_server):
    home = own_server.home

    async def main() -> None:
        async with stdio(home, MEMVAULT_URL=own_server.url) as client:
            assert client.server_info is not None and client.server_info.name == "memvault"
            await remember_and_register(client, home / "vault", "stdio-app")

    anyio.run(main)


def test_a_second_process_sees_what_the_first_wrote(own_server):
    home, url = own_server.home, own_server.url

    async def main() -> None:
        async with stdio(home, MEMVAULT_URL=url) as first:
            await call(
                first,
                "memory_save",
                {"project": "shared-app", "facts": ["db: postgres 16 in production"]},
            )
        async with stdio(home, MEMVAULT_URL=url) as second:
            found = await call(second, "memory_search", {"query": "postgres production"})
            assert [r["project"] for r in found.structured_content["results"]] == ["shared-app"]

    anyio.run(main)


async def _error(client, name: str, arguments: dict) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error, f"{name} {arguments} should have failed: {text(result)}"
    return text(result)


def test_bad_input_is_a_tool_error_that_names_the_problem(own_server):
    home = own_server.home
    vault = home / "vault"

    async def main() -> None:
        async with stdio(home, MEMVAULT_URL=own_server.url) as client:
            missing = await _error(client, "memory_get", {})
            assert missing == "Error executing tool memory_get: id: Field required"

            wrong_type = await _error(client, "memory_search", {"query": "x", "limit": "ten"})
            assert "limit: Input should be a valid integer" in wrong_type

            too_many = await _error(client, "memory_search", {"query": "x", "limit": 500})
            assert "limit: Input should be less than or equal to 100" in too_many

            unknown_argument = await _error(client, "memory_search", {"query": "x", "q": "y"})
            assert "unknown argument(s) q" in unknown_argument
            assert "it takes include_archived, kinds, limit, project, query" in unknown_argument

            unknown_tool = await _error(client, "memory_file_history", {"files": "a.py"})
            assert unknown_tool == "Unknown tool: memory_file_history"

            both = await _error(
                client,
                "memory_session_register",
                {"snapshot": "## Decisions\n- a", "sections": {"Decisions": ["a"]}},
            )
            assert "give either snapshot or sections, not both" in both

            section = await _error(
                client, "memory_session_register", {"sections": {"Thoughts": "hmm"}}
            )
            assert "unknown snapshot section 'Thoughts'" in section

            neither = await _error(client, "memory_timeline", {})
            assert "give session_id or project (one of them)" in neither

            not_found = await _error(client, "memory_get", {"id": "nothing - 2026-01-01 - here"})
            assert "no memory 'nothing - 2026-01-01 - here'" in not_found

            refused = await _error(
                client, "memory_session_update", {"session_id": "2026-01-01-0000-ghost-agent"}
            )
            assert "2026-01-01-0000-ghost-agent is not on the board" in refused

    anyio.run(main)
    assert not (vault / "memory" / "index.md").exists()  # nothing was registered


def test_fragments_breaking_the_rules_are_refused_with_the_write_paths_errors(own_server):
    home = own_server.home
    folder = home / "vault" / "agent-memory"

    async def main() -> None:
        async with stdio(home, MEMVAULT_URL=own_server.url) as client:
            typed = await _error(
                client,
                "memory_save",
                {
                    "project": "rules",
                    "summary": "Typed fragments are not a thing.",
                    "facts": ["kind: decision"],
                    "properties": {"type": "decision", "related_fragments": ["x"]},
                },
            )
            assert "not saved" in typed
            assert "`type` is not used in fragments" in typed
            assert "`related_fragments` is not used in fragments" in typed

            linked = await _error(
                client,
                "memory_save",
                {"project": "rules", "summary": "Links.", "facts": ["see [[Other note]]"]},
            )
            assert "without [[wikilinks]]: [[Other note]]" in linked

            empty = await _error(client, "memory_save", {"project": "rules"})
            assert "at least one fact is required" in empty

    anyio.run(main)
    assert not folder.exists() or not any(folder.glob("*.md"))
