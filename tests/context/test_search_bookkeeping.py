"""A search (REST ``/search``, MCP, CLI) answers with memory, not bookkeeping: no idle
board row nobody described yet, no record of what memvault gave an agent, no session
starting. Fresh and rated like any summary, placeholder rows outranked months of real
work whose words matched far better. They are kept among their sessions' documents with
no words in the index, so thousands of them cannot crowd the work out either."""

from __future__ import annotations

import dataclasses

import pytest

from memvault.domain import DocumentDraft
from memvault.search.lexical import RARE_DOCUMENTS
from tests.context.conftest import start
from tests.helpers import envelope


def _worked(memory) -> None:
    memory.observe(
        envelope(
            "old",
            1,
            hookType="prompt_submit",
            timestamp="2025-03-01T10:00:00.000Z",
            data={"prompt": "rotate the refresh token on every use"},
        )
    )


def test_a_search_leaves_out_placeholder_rows_and_memvaults_own_records(auth_memory):
    _worked(auth_memory)
    for session in ("one", "two", "three"):
        start(auth_memory, session)  # idle rows with the registration's topic and summary
    auth_memory.context.context(
        project="demo-app", query="refresh token", session_id="one", answering="UserPromptSubmit"
    )
    auth_memory.index.index_now(vectors=False)
    kept = auth_memory.store.list_documents("observation", limit=100)
    hooks = {document.meta.get("hookType") for document in kept}
    assert "context_injected" in hooks  # kept among the documents
    assert len(auth_memory.store.list_documents("summary")) == 3
    searcher = auth_memory.index.searcher  # which does not know what bookkeeping is
    indexed = searcher.search(
        "sessionStart registration memory given refresh token",
        limit=50,
        kinds=["observation", "summary"],
    )
    assert {h.document.session_id for h in indexed} == {"old"}  # no words of theirs indexed

    for query in ("refresh token", "sessionStart registration", "memory given", "session"):
        hits = auth_memory.search(query, limit=20)
        for hit in hits:
            document = hit.document
            assert not (document.kind == "summary" and document.meta.get("status") == "idle")
            assert document.meta.get("type") != "host_internal", (query, document.title)
            assert document.meta.get("hookType") != "session_start", (query, document.title)
    found = auth_memory.search("refresh token", limit=20)
    assert any(h.document.session_id == "old" for h in found)


def test_a_described_idle_row_is_still_found(auth_memory):
    start(auth_memory, "one")
    row = auth_memory.reads.session("one").board_session_id
    auth_memory.board.update_session(row, None, topic="Token rotation spike")
    auth_memory.index.index_now(vectors=False)
    assert any(h.document.key == row for h in auth_memory.search("token rotation spike"))


def test_a_search_fills_its_limit_past_the_bookkeeping_it_leaves_out(auth_memory):
    for n in range(12):
        start(auth_memory, f"s{n}")
    for n in range(12):
        auth_memory.observe(
            envelope(
                "work",
                n,
                hookType="prompt_submit",
                timestamp="2025-03-01T10:00:00.000Z",
                data={"prompt": f"refresh token case {n}"},
            )
        )
    auth_memory.index.index_now(vectors=False)
    assert len(auth_memory.search("refresh token", limit=10)) == 10


@pytest.mark.parametrize(
    "notices",
    [
        150,  # more than a search's candidates
        # More than the index calls a word rare for: every word of the request is common,
        # and the index is asked for the newest documents holding them all. Only the
        # notices did (each says all three words); the work, which says two, was not found.
        RARE_DOCUMENTS + 100,
    ],
)
def test_bookkeeping_that_crowds_the_candidates_leaves_the_work_found(memory, notices):
    """A host's notification in every session: the work behind them is still found, its
    list full."""
    noise = [
        envelope(
            f"s{n}",
            0,
            hookType="notification",
            data={"message": "Claude needs your permission to use Bash"},
        )
        for n in range(notices)
    ]
    work = [
        envelope(
            "work",
            n,
            hookType="prompt_submit",
            timestamp="2025-03-01T10:00:00.000Z",
            data={"prompt": f"ask before any Bash command that needs permission, case {n}"},
        )
        for n in range(15)
    ]
    assert memory.observe_many(noise + work).failed == 0
    memory.index.index_now(vectors=False)
    hits = memory.search("permission to use Bash", limit=10)
    assert len(hits) == 10
    assert {h.document.session_id for h in hits} == {"work"}


def _about_to_run(memory, tool: str, given: dict) -> None:
    memory.observe(
        envelope("tools", 1, hookType="pre_tool_use", data={"tool_name": tool, "tool_input": given})
    )
    memory.index.index_now(vectors=False)


def test_a_tool_about_to_run_is_still_found(auth_memory):
    """Cursor tells of a file read only before it happens (``beforeReadFile``)."""
    _about_to_run(auth_memory, "Read", {"file_path": "src/auth/rotation.py"})
    hits = auth_memory.search("rotation.py")
    assert any(h.document.meta.get("hookType") == "pre_tool_use" for h in hits)


def test_the_hosts_own_tool_about_to_run_is_passed_over(auth_memory):
    """ToolSearch is the host looking for its tools, not the session's work."""
    _about_to_run(auth_memory, "ToolSearch", {"query": "zebra"})
    kept = auth_memory.store.list_documents("observation")
    assert [d.meta.get("type") for d in kept] == ["host_internal"]
    assert not auth_memory.index.searcher.search("zebra")
    assert not auth_memory.search("zebra")


def test_a_notice_lends_its_words_to_no_neighbour(memory):
    """A tool call holds its neighbours' words as context; a notice beside it is not one."""
    session = [
        envelope(
            "s",
            0,
            hookType="post_tool_use",
            data={"tool_name": "Bash", "tool_input": {"command": "ls dir"}},
        ),
        envelope("s", 1, hookType="notification", data={"message": "Claude needs your permission"}),
        envelope("s", 2, hookType="prompt_submit", data={"prompt": "rotate the refresh token"}),
    ]
    assert memory.observe_many(session).failed == 0
    memory.index.index_now(vectors=False)
    assert not memory.index.searcher.search("needs your permission")
    assert memory.search("rotate the refresh token")  # the work's words are its neighbours'


def test_bookkeeping_still_holding_words_is_passed_over(auth_memory):
    """An idle row is written again only by the vault's next scan: until then it holds its
    words. What a search finds of such bookkeeping, it passes over, as blocks do."""
    row = DocumentDraft(
        kind="summary",
        key="idle-row",
        title="Untitled",
        summary="Registered at sessionStart; no topic yet.",
        body="Registered at sessionStart; no topic yet. refresh token",
        terms=("untitl", "regist sessionstart topic yet refresh token", "", ""),
        embed_text="",
        importance=0.6,
        updated_at="2026-12-06T10:00:00.000Z",
        content_hash="before",
        project="demo-app",
        session_id="idle-row",
        meta={"status": "idle"},
    )
    notice = dataclasses.replace(
        row,
        kind="observation",
        key="notice",
        title="Notification",
        meta={"type": "notification", "hookType": "notification"},
    )
    auth_memory.store.write_documents([row, notice])
    auth_memory.store.sync()
    assert len(auth_memory.index.searcher.search("refresh token sessionStart")) >= 2
    hits = auth_memory.search("refresh token sessionStart", limit=20)
    assert not {h.document.key for h in hits} & {"idle-row", "notice"}
    packed = auth_memory.context.context(project="demo-app", query="refresh token sessionStart")
    assert "sessionStart" not in packed.text and "Notification" not in packed.text
