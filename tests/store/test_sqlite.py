"""What is specific to the SQLite engine: pragmas, migrations, immutability, query plans."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from contextlib import closing

import pytest

from memvault.ingest import prepare
from memvault.ingest.envelope import Envelope, validate
from memvault.store import migrations, open_store
from memvault.store.sqlite import SQLiteStore
from tests.helpers import envelope, wait_for

pytestmark = pytest.mark.sqlite_only


def connect(path):
    return sqlite3.connect(path, isolation_level=None)


def test_the_database_is_in_wal_mode_with_every_migration_recorded(tmp_path):
    SQLiteStore(tmp_path / "m.db").close()
    conn = connect(tmp_path / "m.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    applied = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
    assert applied == [m.version for m in migrations.load("sqlite")]


def test_reopening_applies_no_migration_twice(tmp_path):
    for _ in range(3):
        SQLiteStore(tmp_path / "m.db").close()
    conn = connect(tmp_path / "m.db")
    count = conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0]
    assert count == len(migrations.load("sqlite"))


def test_commits_leave_checkpoints_to_a_thread_of_their_own(tmp_path):
    """The writer never checkpoints in a commit (it would stall every request queued
    behind it); the checkpointer copies the log into the database file within a second,
    while the store is open, however little was written."""
    store = SQLiteStore(tmp_path / "m.db")
    try:
        (result,) = store.append_events([prepare(validate(Envelope, envelope("ckpt", 1)))])

        def in_the_database_file() -> bool:
            # immutable=1 reads the database file alone, never the WAL beside it.
            uri = f"file:{tmp_path / 'm.db'}?immutable=1"
            with closing(sqlite3.connect(uri, uri=True)) as conn:
                try:
                    found = conn.execute(
                        "SELECT seq FROM events WHERE seq = ?", (result.event_seq,)
                    )
                except sqlite3.OperationalError:  # not even the tables copied yet
                    return False
                return found.fetchone() is not None

        wait_for(in_the_database_file, timeout=5)
        autocheckpoint = store._writer.call(
            lambda conn: conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        )
        assert autocheckpoint == 0
    finally:
        store.close()
    assert not any(t.name == "memvault-sqlite-checkpoint" for t in threading.enumerate())


def test_stored_events_cannot_be_rewritten(tmp_path):
    store = SQLiteStore(tmp_path / "m.db")
    store.append_events([prepare(validate(Envelope, envelope()))])
    store.close()
    conn = connect(tmp_path / "m.db")
    with pytest.raises(sqlite3.IntegrityError, match="events are immutable"):
        conn.execute("UPDATE events SET payload = '{}'")


def test_sequence_numbers_are_never_reused_after_deletion(tmp_path):
    store = SQLiteStore(tmp_path / "m.db")
    last = store.append_events([prepare(validate(Envelope, envelope(n=i))) for i in range(3)])[-1]
    store.close()
    conn = connect(tmp_path / "m.db")
    conn.execute("DELETE FROM observations WHERE event_seq = ?", (last.event_seq,))
    conn.execute("DELETE FROM events WHERE seq = ?", (last.event_seq,))
    conn.close()
    store = SQLiteStore(tmp_path / "m.db")
    new = store.append_events([prepare(validate(Envelope, envelope(n=9)))])[0]
    store.close()
    assert new.event_seq > last.event_seq


@pytest.mark.parametrize(
    ("query", "params"),
    [
        ("SELECT seq FROM events WHERE session_id = ? AND client_event_id = ?", ("s", "e")),
        (
            "SELECT e.seq FROM (VALUES (?,?),(?,?)) AS v JOIN events e "
            "ON e.session_id = v.column1 AND e.client_event_id = v.column2",
            ("s", "e1", "t", "e2"),
        ),
        (
            "SELECT * FROM events e JOIN observations o ON o.event_seq = e.seq "
            "WHERE e.session_id = ? ORDER BY e.occurred_at, e.seq LIMIT 10",
            ("s",),
        ),
        ("SELECT * FROM sessions ORDER BY last_received_at DESC, last_event_seq DESC LIMIT 10", ()),
        (
            "SELECT * FROM sessions WHERE agent_id = ? "
            "ORDER BY last_received_at DESC, last_event_seq DESC LIMIT 5",
            ("cursor",),
        ),
        ("SELECT count(*) FROM jobs WHERE state = 'pending'", ()),
    ],
)
def test_request_path_queries_use_an_index_not_a_table_scan(tmp_path, query, params):
    SQLiteStore(tmp_path / "m.db").close()
    conn = connect(tmp_path / "m.db")
    steps = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {query}", params)]
    assert any("USING" in step for step in steps), steps
    assert not any("TEMP B-TREE" in step for step in steps), steps
    # Scanning the constant VALUES list of a lookup is fine; scanning a table is not.
    full_scans = [
        step
        for step in steps
        if step.startswith("SCAN")
        and "USING" not in step
        and not step.endswith("CONSTANT ROWS")
        and step != "SCAN v"
    ]
    assert not full_scans, steps


def _append_from_another_process(path: str, start: int) -> None:
    store = SQLiteStore(path)
    for n in range(start, start + 40):
        store.append_events([prepare(validate(Envelope, envelope(n=n % 60)))])
    store.close()


def test_two_processes_on_one_file_still_store_each_event_once(tmp_path):
    path = str(tmp_path / "m.db")
    SQLiteStore(path).close()
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_append_from_another_process, args=(path, i * 20)) for i in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    conn = connect(path)
    ids = [row[0] for row in conn.execute("SELECT client_event_id FROM events")]
    assert len(ids) == len(set(ids)) == 60


def test_open_store_refuses_an_engine_it_does_not_have(tmp_path):
    with pytest.raises(ValueError, match="mysql:// names no engine"):
        open_store("mysql://localhost/memvault")
    store = open_store(f"sqlite:///{tmp_path / 'x.db'}")
    assert store.engine == "sqlite"
    store.close()


def test_stats_count_a_log_file_gone_between_listing_and_reading_as_empty(tmp_path, monkeypatch):
    """The write-ahead log goes when its last connection closes, which may fall between
    finding it and reading its size: health must still answer, not fail on the race."""
    store = SQLiteStore(tmp_path / "m.db")
    try:
        wal = tmp_path / "m.db-wal"
        assert wal.exists()
        real_stat = type(wal).stat

        seen = []

        def vanished(path, *args, **kwargs):
            if path == wal:  # there when looked for, gone when read
                seen.append(path)
                if len(seen) > 1:
                    raise FileNotFoundError(2, "No such file or directory", str(path))
            return real_stat(path, *args, **kwargs)

        monkeypatch.setattr(type(wal), "stat", vanished)
        stats = store.stats()
        assert stats.events == 0
        assert stats.size_bytes >= real_stat(tmp_path / "m.db").st_size > 0
        # Gone for good: read as empty, however it is looked for.
        seen.append(wal)
        assert store.stats().size_bytes >= real_stat(tmp_path / "m.db").st_size
    finally:
        monkeypatch.undo()
        store.close()
