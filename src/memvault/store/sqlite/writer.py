"""One writer thread per database, with group commit.

Every write is a small function of a connection. Callers submit it and get a future; the
writer drains whatever is queued, runs it all in one transaction and commits once, so a
burst of hook events costs one fsync instead of one each. If anything in a batch fails, the
batch is rolled back and its operations are retried one transaction each, so one bad write
fails alone and nothing is half-written.

Writes queued by a background thread (indexing, the pipeline; see `memvault.background`)
wait while a request's writes are queued, and go a few at a time in transactions of their
own, so a hook event is never committed behind a backlog of index batches.

A write the database cannot take for now (a full disk, another process holding the lock, a
disk that refuses writes, a database file deleted or replaced under the running store:
``guard``) fails as ``StoreUnavailable`` naming the cause. Every write waits
for another process's lock at most ``lock_wait`` seconds from when it was queued, also when
it was queued behind others waiting for the same lock.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from memvault.background import in_background_thread
from memvault.errors import StoreFailure, StoreUnavailable

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
# The operation, its caller's future, when it was queued, when its wait for a lock ends.
Item = tuple[Operation, Future, float, float]

log = logging.getLogger(__name__)

LOCK_WAIT_SECONDS = 5.0  # how long a write waits for another process's to finish
BACKGROUND_PER_TRANSACTION = 4  # submissions of background threads committed together


class WriterClosed(StoreFailure):
    """The writer is closed, or stopped by an unexpected error: nothing more is written."""


class Writer:
    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        *,
        max_batch: int = 2000,
        name: str = "memvault-writer",
        location: str = "the database",
        lock_wait: float = LOCK_WAIT_SECONDS,
        guard: Callable[[], StoreUnavailable | None] = lambda: None,
    ) -> None:
        self._connect = connect
        self._guard = guard  # asked before each transaction: why none may be written now
        self._max_batch = max_batch
        self._location = location
        self._lock_wait = lock_wait
        self._trouble: StoreUnavailable | None = None  # the last write's, until one passes
        self._locked_since: float | None = None
        # Submissions waiting: requests' first, background threads' after them.
        self._requests: deque[list[Item]] = deque()
        self._background: deque[list[Item]] = deque()
        self._closed = False
        self._gate = threading.Condition()  # queueing, taking and closing never interleave
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
        """Submissions of requests (not of background threads) waiting to be written."""
        return len(self._requests)

    @property
    def failure(self) -> BaseException | None:
        """The error that stopped the writer thread, if one did."""
        return self._failure

    @property
    def trouble(self) -> StoreUnavailable | None:
        """Why the last write failed, while no write has passed since."""
        return self._trouble

    @property
    def locked_for(self) -> float | None:
        """How long the writer has been waiting for another process's lock, if it is."""
        since = self._locked_since
        return None if since is None else time.monotonic() - since

    def submit(
        self, op: Callable[[sqlite3.Connection], T] | Batched, *, wait: float | None = None
    ) -> Future[T]:
        return self.submit_many([op], wait=wait)[0]

    def submit_many(
        self, ops: Iterable[Operation], *, wait: float | None = None
    ) -> list[Future[Any]]:
        """Queue several operations together, so they commit in the same transaction.
        ``wait`` bounds how long they wait for another process's lock (``lock_wait``)."""
        queued = time.monotonic()
        deadline = queued + (self._lock_wait if wait is None else wait)
        items = [(op, Future(), queued, deadline) for op in ops]
        with self._gate:
            if self._failure is not None:
                raise WriterClosed(f"the store's writer stopped: {self._failure!r}")
            if self._closed:
                raise WriterClosed("the store is closed")
            (self._background if in_background_thread() else self._requests).append(items)
            self._gate.notify()
        return [future for _, future, _, _ in items]

    def call(self, op: Callable[[sqlite3.Connection], T]) -> T:
        return self.submit(op).result()

    def close(self) -> None:
        with self._gate:
            if self._closed:
                return
            self._closed = True
            self._gate.notify()
        self._thread.join()

    def _run(self) -> None:
        try:
            conn = self._connect()
        except BaseException as exc:  # surfaced to the constructor
            self._start_error = exc
            self._started.set()
            return
        self._started.set()
        batch: list[Item] = []
        try:
            while True:
                batch = self._take()
                if not batch:
                    return  # closed, and everything queued before is written
                self._commit(conn, batch)
                batch = []
        except BaseException as exc:
            # A bug, not a failed write (those are handled per operation): stop taking
            # work and fail what is in flight or queued, rather than leave callers waiting.
            log.exception("the writer thread stopped")
            self._failure = exc
            _fail(batch, exc)
            self._fail_queued(exc)
        finally:
            conn.close()

    def _take(self) -> list[Item]:
        """The next transaction's operations: every queued request's (up to ``max_batch``),
        else a few background submissions; empty once closed with nothing queued."""
        with self._gate:
            while not self._requests and not self._background:
                if self._closed:
                    return []
                self._gate.wait()
            batch: list[Item] = []
            if self._requests:
                while self._requests and len(batch) < self._max_batch:
                    batch.extend(self._requests.popleft())
            else:
                for _ in range(BACKGROUND_PER_TRANSACTION):
                    if not self._background:
                        break
                    batch.extend(self._background.popleft())
            return batch

    def _fail_queued(self, exc: BaseException) -> None:
        with self._gate:
            while self._requests:
                _fail(self._requests.popleft(), exc)
            while self._background:
                _fail(self._background.popleft(), exc)

    def _commit(self, conn: sqlite3.Connection, batch: list[Item]) -> None:
        live = [item for item in batch if item[1].set_running_or_notify_cancel()]
        refused = self._guard()
        if refused is not None:
            self._fail_all(live, self._note(refused))
            return
        live = self._begin(conn, live)
        if not live:
            return
        try:
            results = _execute(conn, [op for op, *_ in live])
            conn.execute("COMMIT")
        except Exception:
            _rollback(conn)
            for item in live:
                self._run_alone(conn, item)
            return
        self._trouble = None
        for (_, fut, _, _), result in zip(live, results, strict=True):
            fut.set_result(result)

    def _begin(self, conn: sqlite3.Connection, live: list[Item]) -> list[Item]:
        """Start the batch's transaction. While another process holds the write lock, wait
        in steps of a few milliseconds (SQLite's own busy handler sleeps up to 100 ms between
        tries, long after the lock is free, so the connection's busy timeout is 0), failing
        each operation whose wait has run out; the ones still waiting."""
        pause = 0.0005
        while live:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if conn.in_transaction or not _locked(exc):
                    self._fail_all(live, exc)
                    return []
            else:
                self._locked_since = None
                return live
            now = time.monotonic()
            if self._locked_since is None:
                self._locked_since = now
            for _, fut, queued, deadline in live:
                if deadline <= now:
                    fut.set_exception(self._note(self._lock_failure(now - queued)))
            live = [item for item in live if item[3] > now]
            time.sleep(pause)
            pause = min(pause * 2, 0.005)
        self._locked_since = None
        return live

    def _run_alone(self, conn: sqlite3.Connection, item: Item) -> None:
        op, fut, _, _ = item
        if not self._begin(conn, [item]):
            return
        try:
            (result,) = _execute(conn, [op])
            conn.execute("COMMIT")
        except BaseException as exc:
            _rollback(conn)
            log.debug("write failed: %s", exc)
            fut.set_exception(self._unavailable(exc) or exc)
        else:
            self._trouble = None
            fut.set_result(result)

    def _fail_all(self, items: list[Item], exc: BaseException) -> None:
        failure = self._unavailable(exc) or exc
        for _, fut, _, _ in items:
            fut.set_exception(failure)

    def _unavailable(self, exc: BaseException) -> StoreUnavailable | None:
        """``exc`` as the cause a user can act on, when it is the database's state and not
        the write's: the first SQLite error code in its chain (a failed ``ROLLBACK TO`` after
        a full disk carries the disk's error as its context)."""
        seen: BaseException | None = exc
        while seen is not None:
            code = getattr(seen, "sqlite_errorcode", None)
            if isinstance(code, int):
                primary = code & 0xFF
                if primary == sqlite3.SQLITE_FULL:
                    return self._note(
                        StoreUnavailable(
                            f"the disk holding {self._location} is full; nothing was written"
                        )
                    )
                if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                    return self._note(self._lock_failure(None))
                if primary in (
                    sqlite3.SQLITE_READONLY,
                    sqlite3.SQLITE_IOERR,
                    sqlite3.SQLITE_CANTOPEN,
                ):
                    return self._note(
                        StoreUnavailable(
                            f"the database {self._location} cannot be written ({seen}); "
                            "nothing was written"
                        )
                    )
            seen = seen.__cause__ or seen.__context__
        return None

    def _lock_failure(self, waited: float | None) -> StoreUnavailable:
        waited_for = "" if waited is None else f"; waited {max(waited, 0.1):.1f} s"
        return StoreUnavailable(
            f"the database {self._location} is locked by another process{waited_for}; "
            "nothing was written"
        )

    def _note(self, failure: StoreUnavailable) -> StoreUnavailable:
        self._trouble = failure
        return failure


def _locked(exc: sqlite3.OperationalError) -> bool:
    return getattr(exc, "sqlite_errorcode", None) in (
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
    ) or ("locked" in str(exc) or "busy" in str(exc))


def _fail(items: list[Item], exc: BaseException) -> None:
    for _, future, _, _ in items:
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
