"""A session summary is as old as the session it summarizes: a history sent or imported
today registers its board rows today, and its summaries must not rank as fresh memory for
it."""

from __future__ import annotations

import pytest

from memvault import Memory
from memvault.domain import utc_now
from tests.helpers import envelope


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home", embeddings="none", llm="none") as opened:
        yield opened


def event(session: str, n: int, hook: str, data: dict, day: str) -> dict:
    return envelope(
        session,
        n,
        hookType=hook,
        eventId=f"{session}:{n}",
        project="blast",
        agentId="cursor",
        timestamp=f"{day}T10:00:{n:02d}.000Z",
        data=data,
    )


def old_session(memory: Memory) -> str:
    """A session worked in March 2025, sent today as a replay or an import sends it."""
    memory.capture.observe_many(
        [
            event("march", 0, "prompt_submit", {"prompt": "retry the sync upload"}, "2025-03-02"),
            event("march", 1, "assistant_response", {"assistantResponse": "Done."}, "2025-03-04"),
        ]
    )
    report = memory.board.register_host_session("march", "cursor")
    assert report.ok, report.message
    memory.index.index_now()
    return report.session_id


def test_a_summary_is_dated_by_its_sessions_last_event_not_its_rows_registration(memory):
    row = old_session(memory)
    assert not memory.store.board_row(row).updated_at.startswith("2025")  # registered today
    summary = memory.store.document("summary", row)
    assert summary.event_ids[0] == "march:0"
    assert summary.updated_at.startswith("2025-03-04")
    # It ranks no fresher than the session document made from the same events.
    session = memory.store.document("session", "march")
    assert summary.updated_at[:10] == session.updated_at[:10]


def test_a_later_event_moves_the_summarys_date(memory):
    row = old_session(memory)
    memory.capture.observe_many(
        [event("march", 2, "prompt_submit", {"prompt": "and the download"}, "2025-04-10")]
    )
    memory.index.index_now()
    assert memory.store.document("summary", row).updated_at.startswith("2025-04-10")


def test_a_row_no_session_is_tied_to_keeps_its_boards_date(memory):
    report = memory.board.register_session(
        manual=True, topic="Release checklist", summary="What a release needs."
    )
    assert report.ok, report.message
    memory.index.index_now()
    summary = memory.store.document("summary", report.session_id)
    assert summary.updated_at[:10] == utc_now().astimezone().date().isoformat()
