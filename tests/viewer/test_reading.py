"""The Memory reads the viewer shows: a session's timeline paged by sequence, a board row
with its snapshot, and the ingest rate; on a real store and vault."""

from __future__ import annotations

import time

from memvault.memory.reading import IngestRate, recent_injections
from memvault.vault.remember import Draft
from tests.helpers import envelope


def test_a_timeline_pages_by_sequence_and_ends_with_no_next_cursor(memory):
    memory.observe_many([envelope("long", n) for n in range(25)])
    memory.observe(envelope("other", 0))  # another session's event between pages
    memory.observe_many([envelope("long", n) for n in range(25, 30)])
    seen, after = [], 0
    while True:
        page = memory.reads.timeline("long", after=after, limit=10)
        assert page is not None
        seen += [entry.event.seq for entry in page.entries]
        assert all(entry.observation is not None for entry in page.entries)
        if page.next_after is None:
            break
        assert page.next_after == page.entries[-1].event.seq
        after = page.next_after
    assert len(seen) == 30 and seen == sorted(seen) and len(set(seen)) == 30
    assert memory.reads.timeline("no-such-session") is None


def test_timeline_entries_say_what_each_event_was(memory):
    events = [
        envelope("s", 1, hookType="prompt_submit", data={"prompt": "Fix it"}),
        envelope("s", 2),
        envelope("s", 3, hookType="post_tool_failure", data={"tool_name": "Bash", "error": "x"}),
        envelope("s", 4, hookType="assistant_response", data={"response": "Fixed"}),
    ]
    memory.observe_many(events)
    page = memory.reads.timeline("s")
    assert [e.kind for e in page.entries] == ["prompt", "tool", "failure", "response"]


def test_a_timeline_is_found_by_its_board_row_too(memory):
    memory.context.start_session({"sessionId": "host-1", "project": "p", "cwd": "/p"})
    memory.observe(envelope("host-1", 1))
    row = memory.reads.session("host-1").board_session_id
    page = memory.reads.timeline(row)
    assert page is not None and page.session.id == "host-1"
    assert page.board_row is not None and page.board_row.session_id == row


def test_a_board_entry_has_its_snapshot_and_the_rows_it_continues(memory):
    source = memory.board.register_session(manual=True, topic="First", content="## Decisions\n- A")
    report = memory.board.continue_session(None, source.session_id)
    entry = memory.board.entry(report.session_id)
    assert entry is not None
    assert entry.continues_from == [source.session_id]
    assert entry.snapshot is not None
    first = memory.board.entry(source.session_id)
    assert first.row.referenced_by == [report.session_id]
    assert first.snapshot.items("Decisions") == ["A"]
    assert memory.board.entry("2026-01-01-0000-nobody") is None


def test_the_ingest_rate_counts_events_a_minute_for_the_last_hour():
    now = [1_000_000.0]
    rate = IngestRate(clock=lambda: now[0])
    rate.add(3)
    now[0] += 60
    rate.add(2)
    counts = rate.last_hour()
    assert len(counts) == 60 and counts[-2:] == [3, 2]
    now[0] += 3600
    assert sum(rate.last_hour()) == 0


def test_memory_counts_what_it_stores(memory):
    before = sum(memory.reads.ingest_rate.last_hour())
    memory.observe(envelope("r", 0))
    memory.observe_many([envelope("r", n) for n in range(1, 5)])
    memory.observe_many([envelope("r", 1)])  # a repeat stores nothing
    assert sum(memory.reads.ingest_rate.last_hour()) - before == 5
    assert time.time() - memory.reads.ingest_rate.since < 60


def test_a_board_entry_lists_the_memory_given_to_its_session(memory):
    memory.remember(Draft("p", "Checkout retries", ["The payment mock retried."]))
    memory.context.start_session({"sessionId": "host-2", "project": "p", "cwd": "/p"})
    for n in range(3):
        memory.observe(envelope("host-2", n, project="p"))
    row = memory.reads.session("host-2").board_session_id
    entry = memory.board.entry(row)
    assert [g["answered"] for g in entry.injections] == ["SessionStart"]
    assert entry.injections_complete
    assert any(i["kind"] == "fragment" for i in entry.injections[0]["items"])
    # A long session is read back only so far: the row says its list may be partial.
    assert recent_injections(memory.store, "host-2", scan=2)[1] is False
    assert recent_injections(memory.store, "host-2", scan=4)[1] is True


def test_latest_reads_a_projects_newest_observations_across_its_sessions(memory):
    memory.observe_many([envelope("a", n, project="p") for n in range(5)])
    memory.observe_many([envelope("b", n + 10, project="p") for n in range(5)])
    memory.observe(envelope("c", 0, project="elsewhere"))
    found = memory.reads.latest(project="p", limit=4)
    assert [o.session_id for o in found.observations] == ["b"] * 4
    assert found.earlier
    assert [s.id for s, _ in found.sessions] == ["b"]
    assert memory.reads.latest(session_id="nobody") is None
