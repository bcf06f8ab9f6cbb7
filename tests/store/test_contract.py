"""The store contract: what every engine must do, tested through the contract alone."""

from __future__ import annotations

import dataclasses
import threading

from memvault.domain import AppendFailure, AppendResult, BoardRow, iso, utc_now
from memvault.ingest import prepare
from memvault.ingest.envelope import Envelope, validate
from tests.helpers import envelope


def event(session="s1", n=0, **overrides):
    return prepare(validate(Envelope, envelope(session, n, **overrides)))


def test_events_get_increasing_sequence_numbers_and_their_own_observation(store):
    results = store.append_events([event(n=i) for i in range(5)])
    seqs = [r.event_seq for r in results]
    assert seqs == sorted(seqs) and len(set(seqs)) == 5
    assert all(isinstance(r, AppendResult) and not r.deduplicated for r in results)
    assert len({r.observation_id for r in results}) == 5
    later = store.append_events([event(n=99)])[0]
    assert later.event_seq > seqs[-1]


def test_a_repeated_event_id_is_not_written_again_and_returns_the_original_ids(store):
    first = store.append_events([event(n=1)])[0]
    again = store.append_events([event(n=1, data={"different": "content"})])[0]
    assert again.deduplicated
    assert (again.event_seq, again.observation_id) == (first.event_seq, first.observation_id)
    assert len(store.list_events("s1", limit=10)) == 1
    assert store.list_events("s1", limit=10)[0].payload["tool_name"] == "Bash"


def test_duplicates_inside_one_batch_are_written_once(store):
    results = store.append_events([event(n=1), event(n=2), event(n=1)])
    assert [r.deduplicated for r in results] == [False, False, True]
    assert results[2].event_seq == results[0].event_seq
    assert store.get_session("s1").event_count == 2


def test_the_same_event_id_in_two_sessions_is_two_events(store):
    a = store.append_events([event("a", eventId="same")])[0]
    b = store.append_events([event("b", eventId="same")])[0]
    assert not a.deduplicated and not b.deduplicated
    assert a.event_seq != b.event_seq


def test_identical_content_without_event_ids_is_never_deduplicated(store):
    body = envelope()
    del body["eventId"]
    twice = [prepare(validate(Envelope, body)) for _ in range(2)]
    results = store.append_events(twice) + store.append_events(twice[:1])
    assert not any(r.deduplicated for r in results)
    assert len(store.list_events("s1", limit=10)) == 3


def test_identical_content_with_different_event_ids_both_stay(store):
    results = store.append_events([event(eventId="x1"), event(eventId="x2")])
    assert not any(r.deduplicated for r in results)


def test_the_raw_event_is_stored_as_received(store):
    store.append_events([event(n=3, agentId="cursor", timestamp="2026-11-30T10:00:03+02:00")])
    (stored,) = store.list_events("s1", limit=10)
    assert stored.hook_type == "post_tool_use"
    assert stored.client_event_id == "s1-e3"
    assert stored.agent_id == "cursor"
    assert stored.client_timestamp == "2026-11-30T10:00:03+02:00"
    assert stored.occurred_at == "2026-11-30T08:00:03.000Z"
    assert stored.payload == envelope(n=3)["data"]


def test_deduplication_survives_reopening(open_store):
    store = open_store()
    first = store.append_events([event(n=7)])[0]
    store.close()
    reopened = open_store()
    again = reopened.append_events([event(n=7)])[0]
    assert again.deduplicated and again.event_seq == first.event_seq
    assert reopened.stats().events == 1


def test_sessions_are_created_lazily_by_their_first_event(store):
    assert store.get_session("s1") is None
    store.append_events([event(n=0, agentId="cursor", timestamp="2026-11-30T10:00:05Z")])
    session = store.get_session("s1")
    assert (session.project, session.cwd, session.agent_id) == (
        "demo-app",
        "/home/dev/code/demo-app",
        "cursor",
    )
    assert session.event_count == session.observation_count == 1
    assert session.first_event_at == session.last_event_at == "2026-11-30T10:00:05.000Z"


def test_the_agent_id_is_honoured_only_when_the_session_is_created(store):
    store.append_events([event(n=0, agentId="cursor")])
    store.append_events([event(n=1, agentId="claude-code")])
    assert store.get_session("s1").agent_id == "cursor"


def test_session_times_and_counts_follow_events_in_any_order(store):
    store.append_events([event(n=30), event(n=10)])
    store.append_events([event(n=50), event(n=10)])
    session = store.get_session("s1")
    assert session.event_count == 3
    assert session.first_event_at.endswith("10:00:10.000Z")
    assert session.last_event_at.endswith("10:00:50.000Z")


def test_a_tied_board_row_knows_its_sessions_last_event(store):
    store.append_events([event(n=30), event(n=10), event("s2", 5), event("s3", 7)])
    assert store.link_board_session("s1", "2026-12-06-1000-cursor-main-agent")
    assert store.link_board_session("s2", "2026-12-06-1001-cursor-main-agent")
    store.append_events([event(n=50)])
    assert store.board_last_events() == {
        "2026-12-06-1000-cursor-main-agent": store.get_session("s1").last_event_at,
        "2026-12-06-1001-cursor-main-agent": store.get_session("s2").last_event_at,
    }
    assert store.get_session("s1").last_event_at.endswith("10:00:50.000Z")


def test_a_board_rows_last_event_is_never_later_than_it_was_received(store):
    """An event dated ahead of its arrival (ingest dates none so; a store written before it
    did may hold them): its board row is dated when the server got it."""
    ahead = dataclasses.replace(event("ahead", 1), occurred_at="2099-01-01T00:00:00.000Z")
    store.append_events([ahead])
    assert store.link_board_session("ahead", "2026-12-06-1002-cursor-main-agent")
    session = store.get_session("ahead")
    assert session.last_event_at.startswith("2099")
    dated = store.board_last_events()["2026-12-06-1002-cursor-main-agent"]
    assert dated <= iso(utc_now())  # received just now


def test_new_sessions_have_empty_watermarks(store):
    store.append_events([event()])
    session = store.get_session("s1")
    for mark in (session.summarized, session.extracted, session.reflected, session.graph_extracted):
        assert mark.at is None and mark.seq is None
    assert session.summary_revision == 0


def test_ensure_session_creates_once_and_keeps_the_first_agent(store):
    created = store.ensure_session("s9", project="p", cwd="/p", agent_id="cursor", title="T")
    again = store.ensure_session("s9", project="p", cwd="/p", agent_id="other")
    assert created.id == again.id == "s9"
    assert again.agent_id == "cursor" and again.title == "T"
    assert again.event_count == 0


def test_sessions_list_most_recent_first_with_paging_and_agent_filter(store):
    for name, agent in (("a", "cursor"), ("b", "claude-code"), ("c", "cursor")):
        store.append_events([event(name, agentId=agent)])
    assert [s.id for s in store.list_sessions(limit=10)] == ["c", "b", "a"]
    assert [s.id for s in store.list_sessions(limit=1, offset=1)] == ["b"]
    assert [s.id for s in store.list_sessions(limit=10, agent_id="cursor")] == ["c", "a"]


def test_observations_come_in_event_order_with_paging(store):
    store.append_events([event(n=20), event(n=5), event(n=40)])
    listed = store.list_observations("s1", limit=10)
    assert [o.client_event_id for o in listed] == ["s1-e5", "s1-e20", "s1-e40"]
    assert [o.client_event_id for o in store.list_observations("s1", limit=1, offset=1)] == [
        "s1-e20"
    ]
    first = listed[0]
    assert first.type == "command_run" and first.derived_by == "synthetic"
    assert first.title == "Bash: npm test -- case5"


def test_one_failing_event_does_not_fail_the_others(store):
    good, bad, also_good = event(n=1), event(n=2), event(n=3)
    bad.payload = object()  # cannot be stored by any engine
    results = store.append_events([good, bad, also_good])
    assert isinstance(results[1], AppendFailure) and results[1].client_event_id == "s1-e2"
    assert isinstance(results[0], AppendResult) and isinstance(results[2], AppendResult)
    assert [e.client_event_id for e in store.list_events("s1", limit=10)] == ["s1-e1", "s1-e3"]
    assert store.get_session("s1").event_count == 2


def test_concurrent_writers_of_the_same_ids_store_each_event_once(store):
    barrier = threading.Barrier(8)
    results: list[list] = []

    def writer():
        barrier.wait()
        results.append(store.append_events([event(n=i) for i in range(50)]))

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.stats().events == 50
    fresh = sum(not r.deduplicated for batch in results for r in batch)
    assert fresh == 50
    by_id = {}
    for batch in results:
        for r in batch:
            by_id.setdefault(r.client_event_id, set()).add(r.event_seq)
    assert all(len(seqs) == 1 for seqs in by_id.values())


def test_stats_count_what_is_stored(store):
    store.append_events([event("a", 1), event("a", 2), event("b", 1)])
    stats = store.stats()
    assert (stats.events, stats.observations, stats.sessions) == (3, 3, 2)
    assert stats.jobs_pending == stats.jobs_running == stats.jobs_failed == 0
    assert stats.size_bytes > 0 and stats.schema_version >= 1


def test_an_event_holding_a_nul_character_is_stored_and_read_back_as_sent(store):
    data = {
        "tool_name": "Bash",
        "tool_input": {"command": "printf 'a\x00b'"},
        "tool_output": "a\x00b",
    }
    (result,) = store.append_events([event(n=1, data=data)])
    assert isinstance(result, AppendResult)
    (stored,) = store.list_events("s1", limit=10)
    assert stored.payload == data
    # The observation is derived text: PostgreSQL, which cannot hold U+0000, shows U+FFFD.
    (observation,) = store.list_observations("s1", limit=10)
    assert observation.title.replace("\ufffd", "\x00") == "Bash: printf 'a\x00b'"


def test_one_mirrored_board_row_is_read_by_its_id(store):
    rows = [
        BoardRow(
            f"2026-11-30-10{n:02d}-cursor-main-agent",
            "cursor-main-agent",
            f"Topic {n}",
            f"Summary {n}",
            "k",
            "active" if n else "idle",
            ["2026-11-30-1000-cursor-main-agent"] if n == 2 else [],
            "2026-11-30 10:00",
            "2026-11-30 10:05",
        )
        for n in range(3)
    ]
    store.replace_board_rows(rows)
    assert store.board_row(rows[2].session_id) == rows[2]
    assert store.board_row("2026-11-30-1099-cursor-main-agent") is None
    assert store.board_rows(status="idle") == [rows[0]]


def test_what_a_session_was_given_says_whether_a_block_answering_a_request_gave_it(store):
    at = iso(utc_now())
    store.record_injected("s1", [("fragment", "a"), ("fragment", "b")], at, asked=False)
    store.record_injected("s1", [("fragment", "b"), ("summary", "c")], at, asked=True)
    store.record_injected("s1", [("summary", "c"), ("fragment", "a")], at, asked=False)
    store.record_injected("s2", [("fragment", "a")], at, asked=True)
    assert store.injected("s1") == {
        ("fragment", "a"): False,  # given twice, never by a block that answered a request
        ("fragment", "b"): True,  # a standing block's item, then a request's
        ("summary", "c"): True,  # a request's stays so when a standing block gives it again
    }
    assert store.injected("s2") == {("fragment", "a"): True}
    assert store.injected("s3") == {}


def test_what_a_session_was_given_is_forgotten_up_to_a_time_for_that_session_alone(store):
    for session in ("s1", "s2"):
        store.record_injected(session, [("fragment", "a")], "2026-12-07T10:00:00.000Z", asked=True)
    store.record_injected("s1", [("fragment", "b")], "2026-12-07T12:00:00.000Z", asked=False)
    store.forget_injected("s1", through="2026-12-07T11:00:00.000Z")
    assert store.injected("s1") == {("fragment", "b"): False}  # given after: still given
    assert store.injected("s2") == {("fragment", "a"): True}
    store.forget_injected("s3", through="2026-12-07T11:00:00.000Z")  # nothing to forget


def test_an_item_listed_twice_in_one_block_is_recorded_once(store):
    at = iso(utc_now())
    store.record_injected("s1", [("fragment", "a"), ("fragment", "a")], at, asked=False)
    assert store.injected("s1") == {("fragment", "a"): False}
