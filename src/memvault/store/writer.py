"""One writer thread per database, with group commit.

Every write is a small function of a connection. Callers submit it and get a future; the
writer drains whatever is queued, runs it all in one transaction and commits once, so a
burst of hook events costs one fsync instead of one each. If anything in a batch fails, the
batch is rolled back and its operations are retried one transaction each, so one bad write
fails alone and nothing is half-written.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from memvault.errors import StoreFailure

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Batched:
    """An operation the writer may run together with queued others of the same runner.

    ``runner(conn, items)`` gets the ``item`` of every merged operation and returns one
    result per item, in order.
    """

    runner: Callable[[sqlite3.Connection, list[Any]], list[Any]]
    item: Any


Operation = Callable[[sqlite3.Connection], Any] | Batched

log = logging.getLogger(__name__)

LOCK_WAIT_SECONDS = 30.0  # how long a write waits for another process's to finish

_STOP = object()


class WriterClosed(StoreFailure):
    """The writer is closed, or stopped by an unexpected error: nothing more is written."""


class Writer:
    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        *,
        max_batch: int = 2000,
        name: str = "memvault-writer",
    ) -> None:
        self._connect = connect
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._gate = threading.Lock()  # closing and queueing never interleave
        self._failure: BaseException | None = None
        self._started = threading.Event()
        self._start_error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        self._started.wait()
        if self._start_error is not None:
            raise self._start_error

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    @property
    def failure(self) -> BaseException | None:
        """The error that stopped the writer thread, if one did."""
        return self._failure

    def submit(self, op: Callable[[sqlite3.Connection], T] | Batched) -> Future[T]:
        return self.submit_many([op])[0]

    def submit_many(self, ops: Iterable[Operation]) -> list[Future[Any]]:
        """Queue several operations together, so they commit in the same transaction."""
        items = [(op, Future()) for op in ops]
        with self._gate:
            if self._failure is not None:
                raise WriterClosed(f"the store's writer stopped: {self._failure!r}")
            if self._closed:
                raise WriterClosed("the store is closed")
            self._queue.put(items)
        return [future for _, future in items]

    def call(self, op: Callable[[sqlite3.Connection], T]) -> T:
        return self.submit(op).result()

    def close(self) -> None:
        with self._gate:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._thread.join()

    def _run(self) -> None:
        try:
            conn = self._connect()
        except BaseException as exc:  # surfaced to the constructor
            self._start_error = exc
            self._started.set()
            return
        self._started.set()
        batch: list[tuple[Operation, Future]] = []
        try:
            while True:
                first = self._queue.get()
                if first is _STOP:
                    return
                batch = list(first)
                stop = False
                while len(batch) < self._max_batch:
                    try:
                        more = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if more is _STOP:
                        stop = True
                        break
                    batch.extend(more)
                self._commit(conn, batch)
                batch = []
                if stop:
                    return
        except BaseException as exc:
            # A bug, not a failed write (those are handled per operation): stop taking
            # work and fail what is in flight or queued, rather than leave callers waiting.
            log.exception("the writer thread stopped")
            self._failure = exc
            _fail(batch, exc)
            self._fail_queued(exc)
        finally:
            conn.close()

    def _fail_queued(self, exc: BaseException) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP:
                _fail(item, exc)

    def _commit(self, conn: sqlite3.Connection, batch: list[tuple[Operation, Future]]) -> None:
        live = [(op, fut) for op, fut in batch if fut.set_running_or_notify_cancel()]
        if not live:
            return
        try:
            begin(conn)
            results = _execute(conn, [op for op, _ in live])
            conn.execute("COMMIT")
        except Exception:
            _rollback(conn)
            if len(live) == 1:
                self._run_alone(conn, *live[0])
            else:
                for op, fut in live:
                    self._run_alone(conn, op, fut)
            return
        for (_, fut), result in zip(live, results, strict=True):
            fut.set_result(result)

    @staticmethod
    def _run_alone(conn: sqlite3.Connection, op: Operation, fut: Future) -> None:
        try:
            begin(conn)
            (result,) = _execute(conn, [op])
            conn.execute("COMMIT")
        except BaseException as exc:
            _rollback(conn)
            log.debug("write failed: %s", exc)
            fut.set_exception(exc)
        else:
            fut.set_result(result)


def begin(conn: sqlite3.Connection, *, wait: float = LOCK_WAIT_SECONDS) -> None:
    """Start a write transaction, waiting in steps of a few milliseconds while another
    process (``memvault worker`` beside the server) holds the write lock. SQLite's own busy
    handler sleeps up to 100 ms between tries, long after the lock is free, and a request
    waiting on it would feel every one of them; so the connection's busy timeout is 0 and
    the wait is here."""
    deadline = time.monotonic() + wait
    pause = 0.0005
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if conn.in_transaction or not _locked(exc) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.005)


def _locked(exc: sqlite3.OperationalError) -> bool:
    return getattr(exc, "sqlite_errorcode", None) in (
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
    ) or ("locked" in str(exc) or "busy" in str(exc))


def _fail(items: list[tuple[Operation, Future]], exc: BaseException) -> None:
    for _, future in items:
        if not future.done():
            future.set_exception(WriterClosed(f"the store's writer stopped: {exc!r}"))


def _execute(conn: sqlite3.Connection, ops: list[Operation]) -> list[Any]:
    """Run ``ops`` in order, merging each run of ``Batched`` operations of one runner."""
    results: list[Any] = []
    i = 0
    while i < len(ops):
        op = ops[i]
        if not isinstance(op, Batched):
            results.append(op(conn))
            i += 1
            continue
        j = i
        while j < len(ops) and isinstance(ops[j], Batched) and ops[j].runner is op.runner:
            j += 1
        merged = op.runner(conn, [ops[k].item for k in range(i, j)])
        if len(merged) != j - i:
            raise RuntimeError("a batched runner returned the wrong number of results")
        results.extend(merged)
        i = j
    return results


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            log.exception("rollback failed")
