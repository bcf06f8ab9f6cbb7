"""The purge part of the store contract, on every engine: a text replaced in every text
column (the event log included, its guard back afterwards), counted alike by a dry run,
and an audit that keeps counts, never the text."""

from __future__ import annotations

import json
import re

import pytest

from memvault.store.contract.purge import MARKER
from tests.store.test_contract import event

SECRET = "Kx7PurgeMe2026"
PATTERN = re.compile(re.escape(SECRET), re.IGNORECASE)


def stored_with_secret(store):
    data = {"prompt": f"use {SECRET} now", "nested": {"quoted": f'"{SECRET.lower()}"\n'}}
    store.append_events([event(n=1, data=data), event(n=2, data={"prompt": "nothing here"})])
    return store.list_events("s1", limit=10)


def test_a_dry_run_counts_what_a_purge_then_replaces(store):
    stored_with_secret(store)
    dry = store.purge_text(PATTERN, dry_run=True)
    assert "events.payload" in {p.where for p in dry}
    payloads = [e.payload for e in store.list_events("s1", limit=10)]
    assert SECRET in json.dumps(payloads)  # nothing changed yet
    done = store.purge_text(PATTERN)
    assert [(p.where, p.rows, p.matches) for p in done] == [
        (p.where, p.rows, p.matches) for p in dry
    ]
    events = store.list_events("s1", limit=10)
    assert events[0].payload == {
        "prompt": f"use {MARKER} now",
        "nested": {"quoted": f'"{MARKER}"\n'},
    }
    assert events[1].payload == {"prompt": "nothing here"}
    assert store.purge_text(PATTERN, dry_run=True) == []


def test_the_event_log_refuses_updates_again_after_a_purge(store):
    stored_with_secret(store)
    store.purge_text(PATTERN)
    with pytest.raises(Exception, match="immutable"):
        store._writing(
            lambda conn: conn.execute(store._sql("UPDATE events SET payload = ?"), ("{}",))
        )


def test_the_audit_keeps_counts_and_times_never_the_text(store):
    assert store.purge_audit() == (0, [])
    stored_with_secret(store)
    places = store.purge_text(PATTERN)
    record = store.record_purge(len(places), sum(p.rows for p in places), 3)
    count, latest = store.purge_audit()
    assert count == 1 and latest == [record]
    assert record.matches == 3 and record.places == len(places)
