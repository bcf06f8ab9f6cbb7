"""Session summaries and their watermark: what every engine must do."""

from __future__ import annotations

from memvault.domain import Watermark
from memvault.ingest import prepare
from memvault.ingest.envelope import Envelope, validate
from tests.helpers import envelope


def append(store, session="s1", n=0, **overrides):
    return store.append_events([prepare(validate(Envelope, envelope(session, n, **overrides)))])[0]


def test_events_after_a_watermark_are_only_the_new_ones_in_arrival_order(store):
    first = [append(store, n=n) for n in range(3)]
    late = append(store, n=9, timestamp="2026-01-01T00:00:00.000Z")  # arrives last, dated early
    assert [e.seq for e in store.events_after("s1", first[1].event_seq, limit=10)] == [
        first[2].event_seq,
        late.event_seq,
    ]
    observations = store.observations_of([first[2].event_seq, late.event_seq])
    assert [o.event_seq for o in observations] == [first[2].event_seq, late.event_seq]


def test_a_summary_and_its_watermark_move_together_and_never_backwards(store):
    results = [append(store, n=n) for n in range(3)]
    through = Watermark("2026-11-30T10:00:02.000Z", results[-1].event_seq)
    assert store.write_summary("s1", {"topic": "tests"}, through=through, observations=3)
    assert store.session_summary("s1") == ({"topic": "tests"}, 1)
    session = store.get_session("s1")
    assert session.summarized == through and session.summary_revision == 1
    assert session.summarized_observation_count == 3
    # A run that started from an older watermark finds it moved: nothing is written.
    stale = Watermark("2026-11-30T10:00:01.000Z", results[1].event_seq)
    assert not store.write_summary("s1", {"topic": "old"}, through=stale, observations=2)
    assert store.session_summary("s1") == ({"topic": "tests"}, 1)


def test_sessions_to_summarize_by_threshold_idleness_and_cooldown(store):
    for n in range(5):
        append(store, "busy", n)
    append(store, "quiet", 0)
    found = store.sessions_to_summarize(
        threshold=5, idle_before="2000-01-01T00:00:00Z", retry_before="2999-01-01", limit=10
    )
    assert found == ["busy"]
    idle = store.sessions_to_summarize(
        threshold=100, idle_before="2999-01-01T00:00:00Z", retry_before="2999-01-01", limit=10
    )
    assert set(idle) == {"busy", "quiet"}
    store.mark_summary_attempt("quiet", "2026-11-30T12:00:00.000Z")
    cooled = store.sessions_to_summarize(
        threshold=100,
        idle_before="2999-01-01T00:00:00Z",
        retry_before="2026-11-30T11:00:00.000Z",
        limit=10,
    )
    assert cooled == ["busy"]
