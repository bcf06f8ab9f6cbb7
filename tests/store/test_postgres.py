"""What is particular to the PostgreSQL engine: several stores (replicas) on one database,
migrations under a lock, immutability, visible order, and a database that goes away."""

from __future__ import annotations

import inspect
import threading
import time

import pytest

from tests.helpers import IN_CI

if not IN_CI:  # without the postgres extra, a skip here; CI must run every test
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

import psycopg

from memvault.domain import AppendFailure
from memvault.errors import StoreFailure, StoreUnavailable
from memvault.ingest import prepare
from memvault.ingest.envelope import Envelope, validate
from memvault.store import PARTS, migrations
from memvault.store.postgres import PostgresStore
from tests.helpers import envelope, wait_for


def event(session="s1", n=0, **overrides):
    return prepare(validate(Envelope, envelope(session, n, **overrides)))


@pytest.fixture
def url(postgres_cluster):
    return postgres_cluster.database()


@pytest.fixture
def replicas(url):
    """Two stores on one database, as two servers would open it."""
    opened = [PostgresStore(url, pool_size=4) for _ in range(2)]
    yield opened
    for store in opened:
        store.close()


def test_the_engine_fulfils_every_part_of_the_contract(url):
    assert not inspect.isabstract(PostgresStore)
    store = PostgresStore(url, pool_size=1)
    try:
        assert all(isinstance(store, part) for part in PARTS) and store.engine == "postgres"
    finally:
        store.close()


def open_together(url: str, count: int) -> list[PostgresStore]:
    """``count`` stores opened on ``url`` at the same moment, as replicas starting together."""
    opened: list[PostgresStore] = []
    barrier = threading.Barrier(count)

    def open_one():
        barrier.wait()
        opened.append(PostgresStore(url, pool_size=1))

    threads = [threading.Thread(target=open_one) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return opened


def test_stores_opening_together_apply_each_migration_once(url):
    opened = open_together(url, 4)
    for store in opened:
        store.close()
    assert len(opened) == 4
    with psycopg.connect(url) as conn:
        applied = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
    assert sorted(applied) == [m.version for m in migrations.load("postgres")]


def test_a_database_an_older_version_wrote_is_upgraded_once_and_keeps_its_events(url):
    """A database with all but the newest migration (as the version before wrote it),
    holding an event: replicas of this version starting together upgrade it once, under
    the migration lock, and the event is still there, its number not reused."""
    *older, newest = migrations.load("postgres")
    with psycopg.connect(url) as conn:
        conn.execute(
            "CREATE TABLE schema_migrations ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        for migration in older:
            conn.execute(migration.sql.encode())
            conn.execute(
                "INSERT INTO schema_migrations VALUES (%s, %s, '2026-11-30T10:00:00.000Z')",
                (migration.version, migration.name),
            )
        conn.execute(
            "INSERT INTO events (seq, session_id, client_event_id, hook_type, project, cwd, "
            "agent_id, client_timestamp, occurred_at, received_at, payload) VALUES (1, 'old', "
            "'old-e1', 'post_tool_use', 'p', '/p', NULL, '2026-11-30T10:00:00.000Z', "
            "'2026-11-30T10:00:00.000Z', '2026-11-30T10:00:00.000Z', '{}')"
        )
        conn.execute("UPDATE sequences SET value = 1 WHERE name = 'events'")
    opened = open_together(url, 3)
    try:
        assert len(opened) == 3
        with psycopg.connect(url) as conn:
            applied = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
        assert sorted(applied) == [m.version for m in [*older, newest]]
        store = opened[0]
        assert [e.client_event_id for e in store.log_after(0, limit=10)] == ["old-e1"]
        (result,) = store.append_events([event()])
        assert result.event_seq == 2 and not result.deduplicated
        assert store.queue_vault_write("k", "organize", {}) > 0  # the newest migration's
    finally:
        for store in opened:
            store.close()


def test_stored_events_cannot_be_rewritten(url):
    store = PostgresStore(url, pool_size=1)
    store.append_events([event()])
    store.close()
    with (
        psycopg.connect(url) as conn,
        pytest.raises(psycopg.errors.RaiseException, match="events are immutable"),
    ):
        conn.execute("UPDATE events SET payload = '{}'")


def test_replicas_posting_the_same_ids_at_once_store_each_event_once(replicas):
    barrier = threading.Barrier(6)
    results: list[list] = []

    def post(store):
        barrier.wait()
        results.append(store.append_events([event(n=i) for i in range(40)]))

    threads = [threading.Thread(target=post, args=(replicas[i % 2],)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert replicas[0].stats().events == replicas[1].stats().events == 40
    outcomes = [r for batch in results for r in batch]
    assert sum(not r.deduplicated for r in outcomes) == 40
    seqs: dict[str, set[int]] = {}
    for r in outcomes:
        seqs.setdefault(r.client_event_id, set()).add(r.event_seq)
    assert all(len(found) == 1 for found in seqs.values())
    assert replicas[1].get_session("s1").event_count == 40


def test_a_follower_reading_by_sequence_never_passes_an_event_committed_later(replicas):
    """Appends from both replicas commit in the order of their numbers, so a follower that
    moved past a number has seen every event below it."""
    stop = threading.Event()
    seen: list[int] = []

    def follow():
        cursor = 0
        while True:
            done = stop.is_set()
            batch = replicas[0].log_after(cursor, limit=1000)
            seen.extend(e.seq for e in batch)
            if batch:
                cursor = batch[-1].seq
            elif done:
                return

    def post(store, session):
        for n in range(30):
            store.append_events([event(session, n), event(session, n + 100)])

    follower = threading.Thread(target=follow)
    follower.start()
    posters = [threading.Thread(target=post, args=(replicas[i % 2], f"s{i}")) for i in range(4)]
    for thread in posters:
        thread.start()
    for thread in posters:
        thread.join()
    stop.set()
    follower.join()
    assert seen == list(range(1, 241))


def test_replicas_never_claim_the_same_job(replicas):
    for n in range(40):
        replicas[0].enqueue_job("work", {"n": n})
    claimed: list[int] = []
    lock = threading.Lock()

    def work(store, name):
        while (job := store.claim_job(name, ["work"], lease_seconds=60)) is not None:
            with lock:
                claimed.append(job.payload["n"])
            assert store.finish_job(job)

    threads = [threading.Thread(target=work, args=(replicas[i % 2], f"w{i}")) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(claimed) == list(range(40))


def test_a_summary_written_by_two_replicas_at_once_is_written_once(replicas):
    from memvault.domain import Watermark

    last = replicas[0].append_events([event(n=n) for n in range(3)])[-1]
    through = Watermark("2026-11-30T10:00:02.000Z", last.event_seq)
    barrier = threading.Barrier(2)
    written: list[bool] = []

    def write(store):
        barrier.wait()
        written.append(store.write_summary("s1", {"by": "x"}, through=through, observations=3))

    threads = [threading.Thread(target=write, args=(store,)) for store in replicas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(written) == [False, True]
    assert replicas[0].session_summary("s1")[1] == 1


def test_a_database_that_goes_away_fails_writes_in_one_line_and_they_resume(url, postgres_cluster):
    store = PostgresStore(url, pool_size=2, wait=0.5)
    name = url.rsplit("/", 1)[1]
    try:
        store.append_events([event(n=0)])
        with psycopg.connect(postgres_cluster.url, autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (name,),
            )
            with pytest.raises(StoreUnavailable) as failed:
                store.append_events([event(n=1)])
            [line] = str(failed.value).splitlines()
            assert line.startswith(f"the PostgreSQL store {url} cannot be reached")
            assert line.endswith("nothing was written")
            assert store.write_trouble() is not None
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        assert store.write_trouble() is None  # a connection of its own passes at once

        def appended():
            try:
                return store.append_events([event(n=1)])[0]
            except StoreUnavailable:
                return None  # the pool is still reconnecting (it backs off)

        assert wait_for(appended, timeout=20).event_seq == 2
        assert store.stats().events == 2
    finally:
        store.close()


def test_every_append_is_committed_once_its_future_resolves(url):
    store = PostgresStore(url, pool_size=2)
    futures = [store.submit_events([event(n=n)]) for n in range(10)]
    store.sync()
    assert all(f.done() for f in futures) and store.pending_writes == 0
    assert store.write_failure is None
    store.close()
    with pytest.raises(StoreFailure, match="closed"):
        store.submit_events([event(n=11)])


def test_an_event_the_database_refuses_fails_alone(url):
    """A value only the server refuses (the observation's importance beyond its integer)
    fails that event, after the others were sent in the same round trip."""
    store = PostgresStore(url, pool_size=1)
    try:
        bad = event(n=2)
        bad.observation.importance = 2**40
        results = store.append_events([event(n=1), bad, event(n=3)])
        assert isinstance(results[1], AppendFailure)
        assert "out of range" in results[1].error
        assert [r.event_seq for r in (results[0], results[2])] == [1, 2]
        assert [e.client_event_id for e in store.list_events("s1", limit=10)] == ["s1-e1", "s1-e3"]
        assert store.get_session("s1").event_count == 2 and store.stats().events == 2
    finally:
        store.close()


def test_an_id_stored_meanwhile_by_a_writer_outside_the_lock_is_reported_as_a_duplicate(url):
    """The insert's ON CONFLICT DO NOTHING waits for the other writer's row; when that
    commits, the append runs again and finds it: stored once, the later one deduplicated."""
    store = PostgresStore(url, pool_size=2)
    try:
        with psycopg.connect(url) as other:
            other.execute(
                "INSERT INTO events (seq, session_id, client_event_id, hook_type, project, cwd, "
                "client_timestamp, occurred_at, received_at, payload) VALUES (1000, 's1', "
                "'s1-e1', 'post_tool_use', 'p', '/p', 'x', 'x', 'x', '{}')"
            )
            pending = store.submit_events([event(n=1)])
            time.sleep(0.3)  # the append now waits on the other writer's uncommitted row
            assert not pending.done()
            other.commit()
        (result,) = pending.result(timeout=10)
        assert result.deduplicated and result.event_seq == 1000
        assert store.stats().events == 0  # the counters are the store's own; none added
        with psycopg.connect(url) as conn:
            (count,) = conn.execute("SELECT count(*) FROM events").fetchone()
        assert count == 1
    finally:
        store.close()


def test_a_full_disk_fails_writes_naming_it_while_reads_pass_and_writes_resume(
    postgres_cluster,
):
    """The database in a tablespace on a small filesystem: a write that needs room fails
    as unavailable naming the full disk; health keeps saying so while reads still pass,
    and stops once there is room again."""
    import os
    import pwd

    from tests.store.faults import fill, small_disk

    # Inside the cluster's own folder: the account PostgreSQL runs as can reach it.
    with small_disk(postgres_cluster.folder / f"disk{os.getpid()}", "16m") as disk:
        place = disk / "tablespace"
        place.mkdir()
        account = postgres_cluster._prefix[2] if postgres_cluster._prefix else None
        if account is not None:
            owner = pwd.getpwnam(account)
            os.chown(disk, owner.pw_uid, owner.pw_gid)
            os.chown(place, owner.pw_uid, owner.pw_gid)
        name = f"full_{os.getpid()}"
        with psycopg.connect(postgres_cluster.url, autocommit=True) as admin:
            admin.execute(f"CREATE TABLESPACE {name} LOCATION '{place}'")
            admin.execute(f'CREATE DATABASE "{name}" TABLESPACE {name}')
        url = postgres_cluster.url.rsplit("/", 1)[0] + f"/{name}"
        store = PostgresStore(url, pool_size=2)
        try:
            store.append_events([event(n=0)])
            filler = fill(disk)
            big = {
                "tool_name": "Bash",
                "tool_input": {"command": "x"},
                "tool_output": "y" * 600_000,
            }
            with pytest.raises(StoreUnavailable) as failed:
                store.append_events([event(n=1, data=big)])
            assert str(failed.value) == (
                f"the disk of the PostgreSQL store {url} is full; nothing was written"
            )
            assert store.stats().events == 1  # reads pass...
            assert store.write_trouble() is not None  # ...and health still says why
            filler.unlink()
            assert store.write_trouble() is None
            assert store.append_events([event(n=1, data=big)])[0].event_seq == 2
        finally:
            store.close()
            with psycopg.connect(postgres_cluster.url, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
                admin.execute(f"DROP TABLESPACE {name}")
