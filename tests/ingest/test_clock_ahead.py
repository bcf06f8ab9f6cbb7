"""A host whose clock runs ahead: its events are dated when they arrived, so its memory is
not the freshest in every ranking, nor its session active, until that date comes. The
host's own time is kept as it sent it."""

from __future__ import annotations

from memvault.domain import iso, utc_now
from tests.helpers import envelope

AHEAD = "2099-01-01T00:00:00.000Z"


def test_an_event_is_dated_no_later_than_it_arrived(memory):
    before = iso(utc_now())
    sent = envelope("ahead", 1, hookType="prompt_submit", timestamp=AHEAD)
    sent["data"] = {"prompt": "rotate the refresh token"}
    memory.observe(sent)
    after = iso(utc_now())
    (stored,) = memory.store.list_events("ahead", limit=10)
    assert stored.client_timestamp == AHEAD
    assert before <= stored.occurred_at <= after
    assert before <= memory.store.get_session("ahead").last_event_at <= after
    memory.index.index_now(vectors=False)
    hits = memory.search("rotate the refresh token")
    assert hits and all(hit.document.updated_at <= after for hit in hits)


def test_a_time_in_the_past_is_kept(memory):
    memory.observe(envelope("past", 1, timestamp="2026-11-30T10:00:03+02:00"))
    (stored,) = memory.store.list_events("past", limit=10)
    assert stored.occurred_at == "2026-11-30T08:00:03.000Z"
