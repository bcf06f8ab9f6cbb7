"""The two reads the cost tally makes of the event log, on both engines: the events of
one hook type within a range of sequence numbers, and the first sequence received since
a time (a binary search of the primary key)."""

from __future__ import annotations

from memvault.ingest import prepare
from memvault.ingest.envelope import Envelope, validate
from tests.helpers import envelope


def _at(n: int, hook: str, day: str):
    body = envelope("s1", n, hookType=hook, data={"tokens": n})
    return prepare(validate(Envelope, body), f"2026-11-{day}T10:00:00.000Z")


def test_events_of_one_hook_in_a_range_and_the_first_received_since(store):
    days = ["01", "01", "03", "05", "05", "07"]
    hooks = ["context_injected", "post_tool_use"] * 3
    seqs = [
        r.event_seq for r in store.append_events([_at(n, hooks[n], d) for n, d in enumerate(days)])
    ]
    found = store.events_of_hook("context_injected", 0, seqs[-1])
    assert [e.seq for e in found] == [seqs[0], seqs[2], seqs[4]]
    assert [e.payload["tokens"] for e in found] == [0, 2, 4]
    assert [e.seq for e in store.events_of_hook("context_injected", seqs[0], seqs[3])] == [seqs[2]]
    assert store.first_seq_received_since("2026-11-01T00:00:00.000Z") <= seqs[0]
    assert store.first_seq_received_since("2026-11-02T00:00:00.000Z") == seqs[2]
    assert store.first_seq_received_since("2026-11-05T10:00:00.000Z") == seqs[3]
    assert store.first_seq_received_since("2026-12-01T00:00:00.000Z") == seqs[-1] + 1
