"""Editing and deleting a fragment through MCP, the official client talking to memvault's
server: the vault file is the truth, only the fields asked for change, a hand edit made in
between stays, and an id that names no fragment is refused by name with nothing changed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from mcp.client import Client

from memvault.mcp_server import server
from memvault.vault import frontmatter
from tests.mcp.clients import call, text


@pytest.fixture
def tools():
    """The server's tool table, which holds the edit and delete tools."""
    return server.TOOLS


@asynccontextmanager
async def connected(memory) -> AsyncIterator[Client]:
    async with Client(server.build_server(memory), mode="legacy") as client:
        yield client


async def _save(client: Client, project: str = "demo-app", **extra) -> str:
    saved = await call(
        client,
        "memory_save",
        {
            "project": project,
            "summary": "Gateway retries use exponential backoff capped at 30 s.",
            "facts": ["retry: exponential backoff, base 0.5 s", "cap: 30 s"],
            "importance": 0.6,
            **extra,
        },
    )
    return saved.structured_content["id"]


def _file(memory, fragment_id: str):
    return memory.settings.fragments_path / f"{fragment_id}.md"


def test_the_edit_and_delete_tools_are_listed_and_delete_says_it_is_destructive(tools, memory):
    async def main() -> None:
        async with connected(memory) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert {"memory_edit", "memory_delete", "memory_governance_delete"} <= set(listed)
            assert listed["memory_delete"].annotations.destructive_hint is True
            assert listed["memory_edit"].annotations.destructive_hint is False

    anyio.run(main)


def test_a_hand_edit_made_between_two_edits_is_kept(tools, memory):
    async def main() -> None:
        async with connected(memory) as client:
            fragment_id = await _save(client, tags=["networking"])
            await call(
                client,
                "memory_edit",
                {"id": fragment_id, "summary": "Gateway retries back off up to 20 s."},
            )
            path = _file(memory, fragment_id)
            # A person opens the file in Obsidian between the two edits.
            by_hand = path.read_text(encoding="utf-8").replace(
                "importance: 0.6", "importance: 0.6  # checked with ops\nreviewed: 'yes'"
            )
            by_hand += "\n## Notes\n- seen in prod: 2026-11-02 incident\n"
            path.write_text(by_hand, encoding="utf-8")

            edited = await call(
                client,
                "memory_edit",
                {
                    "id": fragment_id,
                    "importance": 0.9,
                    "add_facts": ["cap: 20 s ∵ the gateway drops requests after 30 s"],
                    "remove_facts": ["cap: 30 s"],
                    "add_tags": ["needs review", "#gateway"],
                },
            )
            written = path.read_text(encoding="utf-8")
            assert "reviewed: 'yes'" in written and "# checked with ops" not in written
            assert "## Notes\n- seen in prod: 2026-11-02 incident\n" in written
            assert "- cap: 30 s\n" not in written
            assert "- retry: exponential backoff, base 0.5 s" in written
            properties = frontmatter.read(written)
            assert properties["summary"] == "Gateway retries back off up to 20 s."
            assert properties["importance"] == 0.9
            assert properties["reviewed"] == "yes"
            assert properties["tags"] == ["agent-memory", "networking", "needs-review", "gateway"]
            assert edited.structured_content["properties"]["importance"] == 0.9
            assert "cap: 20 s" in text(edited)

            # Indexed at once: a search finds the new words, the old summary is gone.
            found = await call(client, "memory_search", {"query": "back off up to 20"})
            first = found.structured_content["results"][0]
            assert (first["id"], first["summary"]) == (fragment_id, properties["summary"])

    anyio.run(main)


def test_an_edit_changes_nothing_but_the_lines_of_the_fields_asked(tools, memory):
    async def main() -> None:
        async with connected(memory) as client:
            fragment_id = await _save(client)
            path = _file(memory, fragment_id)
            before = path.read_text(encoding="utf-8")
            await call(client, "memory_edit", {"id": fragment_id, "importance": 0.8})
            after = path.read_text(encoding="utf-8")
            assert after == before.replace("importance: 0.6", "importance: 0.8")

    anyio.run(main)


def test_replacing_the_facts_keeps_a_persons_headings(tools, memory):
    async def main() -> None:
        async with connected(memory) as client:
            fragment_id = await _save(client)
            path = _file(memory, fragment_id)
            path.write_text(path.read_text("utf-8") + "## Later\n", encoding="utf-8")
            await call(client, "memory_edit", {"id": fragment_id, "facts": ["one: fact"]})
            _, body = frontmatter.split(path.read_text(encoding="utf-8"))
            assert body == "## Later\n- one: fact\n"

    anyio.run(main)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (
            {"id": "demo-app - 2026-01-01 - nothing"},
            "no fragment 'demo-app - 2026-01-01 - nothing'",
        ),
        ({"id": "../../outside"}, "'../../outside.md' leads outside agent-memory/"),
        ({"id": "_projects/demo-app"}, "'_projects/demo-app' is a project summary"),
        ({"id": "obs_1"}, "no fragment 'obs_1'"),
    ],
)
def test_an_edit_of_an_id_that_names_no_fragment_is_refused_by_name(
    tools, memory, arguments, named
):
    outside = memory.settings.vault_path.parent / "outside.md"
    outside.write_text("---\nsummary: not a fragment\n---\n- mine\n", encoding="utf-8")
    summaries = memory.settings.fragments_path / "_projects"
    summaries.mkdir(parents=True)
    (summaries / "demo-app.md").write_text("---\nsummary: x\n---\n- y\n", encoding="utf-8")

    async def main() -> None:
        async with connected(memory) as client:
            for name in ("memory_edit", "memory_delete"):
                extra = {"summary": "x."} if name == "memory_edit" else {}
                result = await client.call_tool(name, {**arguments, **extra})
                assert result.is_error, text(result)
                assert named in text(result), text(result)

    anyio.run(main)
    assert outside.read_text(encoding="utf-8").endswith("- mine\n")
    assert (summaries / "demo-app.md").exists()


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({}, "nothing to change"),
        ({"remove_facts": ["not there"]}, "no such fact to remove: 'not there'"),
        ({"facts": []}, "facts must not be empty"),
        (
            {"remove_facts": ["retry: exponential backoff, base 0.5 s", "cap: 30 s"]},
            "without facts",
        ),
        ({"add_tags": ["2026"]}, "tag '2026'"),
        ({"add_facts": ["see [[other]]"]}, "[[other]]"),
        ({"importance": 2}, "importance"),
    ],
)
def test_a_refused_edit_names_the_problem_and_leaves_the_file_as_it_was(
    tools, memory, arguments, named
):
    async def main() -> None:
        async with connected(memory) as client:
            fragment_id = await _save(client)
            path = _file(memory, fragment_id)
            before = path.read_bytes()
            result = await client.call_tool("memory_edit", {"id": fragment_id, **arguments})
            assert result.is_error and named in text(result), text(result)
            assert path.read_bytes() == before

    anyio.run(main)


def test_memory_delete_removes_the_file_and_search_no_longer_finds_it(tools, memory):
    async def main() -> None:
        async with connected(memory) as client:
            fragment_id = await _save(client)
            deleted = await call(client, "memory_delete", {"id": fragment_id})
            assert deleted.structured_content["id"] == fragment_id
            assert not _file(memory, fragment_id).exists()
            found = await call(client, "memory_search", {"query": "gateway backoff"})
            assert found.structured_content["results"] == []
            again = await client.call_tool("memory_delete", {"id": fragment_id})
            assert again.is_error and f"no fragment {fragment_id!r}" in text(again)

    anyio.run(main)


def test_a_fragment_written_by_hand_and_not_indexed_yet_can_be_edited_and_deleted(tools, memory):
    folder = memory.settings.fragments_path
    folder.mkdir(parents=True)
    name = "demo-app - 2026-11-30 - by hand"
    (folder / f"{name}.md").write_text(
        "---\ntags: [agent-memory]\nproject: demo-app\ndate: 2026-11-30\n"
        "summary: Written in Obsidian.\nimportance: 0.5\n---\n- by: hand\n",
        encoding="utf-8",
    )

    async def main() -> None:
        async with connected(memory) as client:
            await call(client, "memory_edit", {"id": name, "add_tags": ["needs review"]})
            written = (folder / f"{name}.md").read_text(encoding="utf-8")
            # A flow list written by hand becomes Obsidian's block list, tags added.
            assert "tags:\n  - agent-memory\n  - needs-review\nproject" in written
            await call(client, "memory_delete", {"id": name})
            assert not (folder / f"{name}.md").exists()

    anyio.run(main)


def test_governance_delete_takes_agentmemorys_comma_separated_ids(tools, memory):
    async def main() -> None:
        async with connected(memory) as client:
            first = await _save(client, project="one")
            second = await _save(client, project="two")
            deleted = await call(
                client,
                "memory_governance_delete",
                {"memoryIds": f"{first}, {second}", "reason": "superseded"},
            )
            assert deleted.structured_content["deleted"] == 2
            assert deleted.structured_content["reason"] == "superseded"
            assert not _file(memory, first).exists() and not _file(memory, second).exists()

    anyio.run(main)


def test_governance_delete_deletes_nothing_when_one_id_names_no_fragment(tools, memory):
    async def main() -> None:
        async with connected(memory) as client:
            kept = await _save(client)
            result = await client.call_tool(
                "memory_governance_delete", {"memoryIds": [kept, "no-such-fragment"]}
            )
            assert result.is_error
            assert "nothing deleted" in text(result) and "'no-such-fragment'" in text(result)
            assert _file(memory, kept).exists()

    anyio.run(main)
