"""Upgrading a store whose sessions were given memory before blocks recorded whether they
answered a request (migration 0020): on every engine what was given counts as given by a
request's block, so no item is given twice, as before; what is given next is recorded as
it is."""

from __future__ import annotations

from memvault.domain import iso, utc_now
from memvault.store import migrations


def test_what_was_given_before_counts_as_given_by_a_request(open_store, monkeypatch):
    load = migrations.load
    with monkeypatch.context() as before:
        before.setattr(migrations, "load", lambda e: [m for m in load(e) if m.version < 20])
        old = open_store()
        insert = old._sql(
            "INSERT INTO injections (session_id, kind, item_id, injected_at) VALUES (?, ?, ?, ?)"
        )
        at = iso(utc_now())
        old._writing(lambda conn: conn.execute(insert, ("s1", "fragment", "a", at)))
        old.close()
    store = open_store()
    assert store.injected("s1") == {("fragment", "a"): True}
    store.record_injected("s1", [("fragment", "b")], iso(utc_now()), asked=False)
    assert store.injected("s1") == {("fragment", "a"): True, ("fragment", "b"): False}
