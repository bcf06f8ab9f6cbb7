"""The queue of vault writes (both engines): kept in order, once per request key, done once;
and who owns the vault (PostgreSQL: one store at a time)."""

from __future__ import annotations

import pytest

from memvault.store import open_store


def test_writes_are_queued_in_order_and_a_repeated_key_is_kept_once(store):
    first = store.queue_vault_write("k1", "register_session", {"kwargs": {"topic": "a"}})
    second = store.queue_vault_write("k2", "remember", {"args": [1, "two"]})
    assert store.queue_vault_write("k1", "register_session", {"kwargs": {"topic": "b"}}) == first
    due = store.vault_writes_due()
    assert [(w.id, w.kind, w.done) for w in due] == [
        (first, "register_session", False),
        (second, "remember", False),
    ]
    assert due[0].payload == {"kwargs": {"topic": "a"}}
    assert store.vault_writes_waiting() == 2


def test_a_finished_write_keeps_its_answer_and_is_finished_once(store):
    write_id = store.queue_vault_write("k", "organize", {"kwargs": {}})
    store.finish_vault_write(write_id, {"value": "first"})
    store.finish_vault_write(write_id, {"value": "second"})  # a second owner's late answer
    write = store.vault_write(write_id)
    assert write is not None and write.done and write.result == {"value": "first"}
    assert store.vault_writes_due() == [] and store.vault_writes_waiting() == 0
    assert store.vault_write(write_id + 1000) is None


def test_sqlite_is_always_the_owner(tmp_path):
    store = open_store(str(tmp_path / "memvault.db"))
    try:
        assert store.take_vault_ownership() and store.take_vault_ownership()
        assert store.pool_stats() is None
    finally:
        store.close()


def test_one_postgres_store_at_a_time_owns_the_vault_and_closing_hands_it_on(postgres_cluster):
    pytest.importorskip("psycopg")
    url = postgres_cluster.database()
    first, second = open_store(url), open_store(url)
    try:
        assert first.take_vault_ownership() is True
        assert second.take_vault_ownership() is False
        assert first.take_vault_ownership() is True  # still held, on its own connection
        pool = first.pool_stats()
        assert pool is not None and pool["size"] >= 1 and pool["inUse"] >= 0
        first.give_up_vault_ownership()
        assert second.take_vault_ownership() is True
        assert first.take_vault_ownership() is False
    finally:
        first.close()
        second.close()


def test_applied_writes_older_than_a_day_are_pruned_but_the_vaults_identity_stays(store):
    identity = store.queue_vault_write("vault-identity", "identity", {"id": "abc"})
    store.finish_vault_write(identity, {})
    old = store.queue_vault_write("old", "organize", {})
    store.finish_vault_write(old, {"value": 1})
    _age(store, [identity, old])
    recent = store.queue_vault_write("recent", "organize", {})
    store.finish_vault_write(recent, {"value": 2})  # applying one prunes the old
    assert store.vault_write(old) is None
    assert store.vault_write(identity) is not None and store.vault_write(recent) is not None


def _age(store, ids: list[int]) -> None:
    """Move these writes' application two days back, in the engine's own database."""
    sql = "UPDATE vault_writes SET applied_at = '2000-01-01T00:00:00.000Z' WHERE id = "
    if store.engine == "sqlite":
        for write_id in ids:
            store._writer.call(lambda conn, w=write_id: conn.execute(sql + "?", (w,)))
    else:
        for write_id in ids:
            store._transaction(lambda conn, w=write_id: conn.execute(sql + "%s", (w,)))
