"""The single writer: group commit, merged batches, failure isolation, and a loud death."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from memvault.store.sqlite.writer import Batched, Writer, WriterClosed

pytestmark = pytest.mark.sqlite_only


class CountingConnection(sqlite3.Connection):
    commits = 0

    def execute(self, sql, *args):
        if sql == "COMMIT":
            type(self).commits += 1
        return super().execute(sql, *args)


@pytest.fixture
def writer(tmp_path):
    CountingConnection.commits = 0

    def connect():
        conn = sqlite3.connect(
            tmp_path / "w.db",
            isolation_level=None,
            check_same_thread=False,
            factory=CountingConnection,
        )
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER UNIQUE)")
        return conn

    opened = Writer(connect)
    yield opened
    opened.close()


def insert(x):
    def op(conn):
        conn.execute("INSERT INTO t (x) VALUES (?)", (x,))
        return x

    return op


def rows(writer):
    return writer.call(lambda conn: [r[0] for r in conn.execute("SELECT x FROM t ORDER BY x")])


def test_writes_queued_while_the_writer_is_busy_share_one_commit(writer):
    busy, release = threading.Event(), threading.Event()

    def hold(conn):
        busy.set()
        release.wait(10)

    writer.submit(hold)
    busy.wait(10)
    before = CountingConnection.commits
    futures = [writer.submit(insert(i)) for i in range(50)]
    release.set()
    assert [f.result(10) for f in futures] == list(range(50))
    assert CountingConnection.commits - before <= 2  # hold's own commit, then one for all


def test_a_failing_write_fails_alone_and_the_others_commit(writer):
    busy, release = threading.Event(), threading.Event()
    writer.submit(lambda conn: (busy.set(), release.wait(10)))
    busy.wait(10)
    good, bad, also_good = (
        writer.submit(insert(1)),
        writer.submit(insert(1)),  # violates UNIQUE
        writer.submit(insert(2)),
    )
    release.set()
    assert good.result(10) == 1 and also_good.result(10) == 2
    with pytest.raises(sqlite3.IntegrityError):
        bad.result(10)
    assert rows(writer) == [1, 2]


def test_batched_operations_of_one_runner_are_merged_into_one_call(writer):
    calls = []

    def runner(conn, items):
        calls.append(list(items))
        return [item * 10 for item in items]

    busy, release = threading.Event(), threading.Event()
    writer.submit(lambda conn: (busy.set(), release.wait(10)))
    busy.wait(10)
    futures = [writer.submit(Batched(runner, i)) for i in range(5)]
    release.set()
    assert [f.result(10) for f in futures] == [0, 10, 20, 30, 40]
    assert calls == [[0, 1, 2, 3, 4]]


def test_a_writer_stopped_by_a_bug_fails_pending_and_new_work(writer, monkeypatch):
    def broken(conn, batch):
        raise RuntimeError("bug in the writer")

    monkeypatch.setattr(writer, "_commit", broken)
    future = writer.submit(insert(1))
    with pytest.raises(WriterClosed, match="bug in the writer"):
        future.result(10)
    assert isinstance(writer.failure, RuntimeError)
    with pytest.raises(WriterClosed):
        writer.submit(insert(2))


def test_closing_finishes_queued_work_first(tmp_path):
    def connect():
        conn = sqlite3.connect(tmp_path / "c.db", isolation_level=None, check_same_thread=False)
        conn.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
        return conn

    writer = Writer(connect)
    futures = [writer.submit(insert(i)) for i in range(100)]
    writer.close()
    assert [f.result(0) for f in futures] == list(range(100))
    with pytest.raises(WriterClosed, match="closed"):
        writer.submit(insert(1))


def test_work_queued_while_closing_is_done_or_refused_never_left_waiting(tmp_path):
    def connect():
        return sqlite3.connect(tmp_path / "r.db", isolation_level=None, check_same_thread=False)

    for _ in range(20):
        writer = Writer(connect)
        futures, refused = [], 0
        closer = threading.Thread(target=writer.close)
        closer.start()
        for _ in range(50):
            try:
                futures.append(writer.submit(lambda conn: 1))
            except WriterClosed:
                refused += 1
        closer.join()
        assert all(f.result(5) == 1 for f in futures)
        assert len(futures) + refused == 50


def in_background(fn):
    """Run ``fn`` on a thread marked as background work, as the indexer's and the
    pipeline's are; its result."""
    from memvault.background import lower_this_threads_priority

    result: list = []

    def run():
        lower_this_threads_priority()
        result.append(fn())

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(10)
    return result[0]


def test_a_requests_write_is_committed_before_background_writes_queued_earlier(writer):
    busy, release = threading.Event(), threading.Event()
    order: list[str] = []

    def hold(conn):
        busy.set()
        release.wait(10)

    def noting(name):
        def op(conn):
            order.append(name)

        return op

    held = writer.submit(hold)
    busy.wait(5)
    queued = in_background(
        lambda: [writer.submit(noting(f"background {n}")) for n in range(2 * 4 + 1)]
    )
    request = writer.submit(noting("request"))
    release.set()
    request.result(5)
    for future in queued:
        future.result(5)
    held.result(5)
    assert order[0] == "request"
    assert order[1:] == [f"background {n}" for n in range(9)]


def test_background_writes_go_in_small_transactions_of_their_own(writer):
    busy, release = threading.Event(), threading.Event()

    def hold(conn):
        busy.set()
        release.wait(10)

    held = writer.submit(hold)
    busy.wait(5)
    before = CountingConnection.commits
    queued = in_background(lambda: [writer.submit(insert(n)) for n in range(12)])
    release.set()
    for future in queued:
        future.result(5)
    held.result(5)
    # 1 for the held write, then 12 background submissions 4 to a transaction.
    assert CountingConnection.commits - before == 1 + 3
    assert rows(writer) == list(range(12))


def test_pending_counts_only_the_writes_requests_wait_for(writer):
    busy, release = threading.Event(), threading.Event()

    def hold(conn):
        busy.set()
        release.wait(10)

    held = writer.submit(hold)
    busy.wait(5)
    queued = in_background(lambda: [writer.submit(insert(n)) for n in range(3)])
    assert writer.pending == 0
    request = writer.submit(insert(99))
    assert writer.pending == 1
    release.set()
    for future in [*queued, request, held]:
        future.result(5)
    assert writer.pending == 0
