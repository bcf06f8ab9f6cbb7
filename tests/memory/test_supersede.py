"""Superseded fragments: an agent names the fragment a new one replaces (MCP memory_save
and memory_edit, the official client against memvault's MCP server), the older file says
so in its frontmatter, summary and body, it is never injected as current again, and a
search still finds it with its mark."""

from __future__ import annotations

from contextlib import asynccontextmanager

import anyio
from mcp.client import Client

from memvault.mcp_server import server
from memvault.vault.fragments import Fragment
from tests.mcp.clients import call, text

OLD = {
    "project": "shop",
    "summary": "Sessions are stored in Redis with a 30 minute TTL.",
    "facts": ["decision: sessions in Redis", "ttl: 30 min", "files: src/session/store.ts"],
    "tags": ["decision"],
    "importance": 0.8,
}
NEW = {
    "project": "shop",
    "summary": "Sessions moved to Postgres; Redis is no longer used for them.",
    "facts": ["decision: sessions in Postgres", "table: sessions", "files: src/session/store.ts"],
    "tags": ["decision"],
    "importance": 0.8,
}


@asynccontextmanager
async def connected(memory):
    async with Client(server.build_server(memory), mode="legacy") as client:
        yield client


def _saved(memory, arguments: dict) -> str:
    async def main() -> str:
        async with connected(memory) as client:
            return (await call(client, "memory_save", arguments)).structured_content["id"]

    return anyio.run(main)


def test_memory_save_with_supersedes_marks_the_older_fragment_and_it_leaves_the_block(memory):
    older = _saved(memory, OLD)
    before = memory.context.context(project="shop", query="where are sessions stored")
    assert any(b["kind"] == "fragment" for b in before.blocks), before.text

    async def main() -> str:
        async with connected(memory) as client:
            saved = await call(client, "memory_save", {**NEW, "supersedes": older})
            assert saved.structured_content["supersedes"] == older
            assert f"supersedes: {older}" in text(saved)
            return saved.structured_content["id"]

    newer = anyio.run(main)
    fragment = Fragment.read(memory.settings.fragments_path / f"{older}.md")
    assert fragment.properties["superseded_by"] == newer
    assert fragment.properties["superseded_on"]
    assert fragment.summary.startswith("[superseded] Sessions are stored in Redis")
    assert f"- [superseded] by {newer} on " in fragment.body
    assert "- ttl: 30 min" in fragment.body  # the history stays

    block = memory.context.context(project="shop", query="where are sessions stored")
    ids = {b["id"] for b in block.blocks if b["kind"] == "fragment"}
    assert any(newer in i for i in ids), block.text
    assert not any(older in i for i in ids), block.text
    standing = memory.context.context(project="shop")
    assert older not in standing.text and "Redis with a 30 minute TTL" not in standing.text

    hits = memory.recall.search("sessions Redis TTL", project="shop")
    marked = [h for h in hits if older in h.document.key]
    assert marked and marked[0].document.summary.startswith("[superseded]")


def test_memory_edit_with_only_supersedes_marks_it_and_a_bad_id_changes_nothing(memory):
    older, newer = _saved(memory, OLD), _saved(memory, NEW)
    path = memory.settings.fragments_path / f"{older}.md"
    untouched = path.read_bytes()

    async def main() -> None:
        async with connected(memory) as client:
            refused = await client.call_tool(
                "memory_save", {**NEW, "summary": "Carts expire after a day.", "supersedes": "nope"}
            )
            assert refused.is_error and "nope" in text(refused)
            self_made = await client.call_tool("memory_edit", {"id": older, "supersedes": older})
            assert self_made.is_error and "itself" in text(self_made)
            assert path.read_bytes() == untouched
            edited = await call(client, "memory_edit", {"id": newer, "supersedes": older})
            assert edited.structured_content["supersedes"] == older
            again = await call(client, "memory_edit", {"id": newer, "supersedes": older})
            assert again.structured_content["id"] == newer

    anyio.run(main)
    assert not list(memory.settings.fragments_path.glob("*Carts*"))
    text_now = path.read_text()
    assert text_now.count("[superseded]") == 2  # summary and body, once each however often
    assert Fragment.read(path).properties["superseded_by"] == newer


def test_a_fragment_marked_resolved_by_hand_is_not_injected_as_current(memory):
    older = _saved(memory, OLD)
    path = memory.settings.fragments_path / f"{older}.md"
    path.write_text(
        path.read_text()
        .replace("summary: ", "summary: '[resolved] ", 1)
        .replace("TTL.\n", "TTL.'\n", 1)
    )
    assert Fragment.read(path).summary.startswith("[resolved]")
    block = memory.context.context(project="shop", query="where are sessions stored in Redis")
    assert older not in block.text


def test_saving_the_old_words_again_does_not_revive_the_superseded_fragment(memory):
    older = _saved(memory, OLD)
    _saved(memory, {**NEW, "supersedes": older})
    again = _saved(memory, OLD)  # the same words: a near-duplicate of the superseded one
    assert again != older
    marked = Fragment.read(memory.settings.fragments_path / f"{older}.md")
    assert marked.summary.startswith("[superseded]")


def test_a_draft_cannot_set_the_mark_through_its_properties(memory):
    async def main() -> str:
        async with connected(memory) as client:
            refused = await client.call_tool(
                "memory_save", {**OLD, "properties": {"superseded_by": "anything"}}
            )
            assert refused.is_error
            return text(refused)

    assert "superseded_by" in anyio.run(main)
