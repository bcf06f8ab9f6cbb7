"""The embedded SQLite engine: WAL, one writer thread with group commit, pooled readers.

``SQLiteStore`` is its parts together: the shared ones (``store.log_reads``,
``store.session_rows``, ``store.graph_queries``) read on a thread's own reader and write on
the writer thread; its own (sessions, jobs, derived results, the index, the vault's queue)
live in this package, one module each.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar

from memvault.domain import NewEvent, StoreStats
from memvault.errors import StoreFailure, StoreUnavailable
from memvault.store.contract import AppendOutcome, Store
from memvault.store.log_reads import LogReads
from memvault.store.schema import store_stats
from memvault.store.session_rows import BoardRows, SessionRows
from memvault.store.sqlite import graph
from memvault.store.sqlite.append import append_requests
from memvault.store.sqlite.checkpoint import Checkpointer
from memvault.store.sqlite.connections import (
    LOW_SPACE_BYTES,
    PROBE_WAIT,
    migrate,
    probe,
)
from memvault.store.sqlite.derived import SQLiteDerived
from memvault.store.sqlite.documents import SQLiteIndex
from memvault.store.sqlite.jobs import SQLiteJobs
from memvault.store.sqlite.purge import SQLitePurge
from memvault.store.sqlite.sessions import SQLiteSessions
from memvault.store.sqlite.vault import SQLiteVaultWrites
from memvault.store.sqlite.writer import LOCK_WAIT_SECONDS, Batched, Writer

T = TypeVar("T")


class SQLiteStore(
    SQLiteSessions,
    SQLiteJobs,
    SQLiteDerived,
    SQLiteIndex,
    SQLiteVaultWrites,
    SQLitePurge,
    LogReads,
    SessionRows,
    BoardRows,
    Store,
):
    engine = "sqlite"
    GRAPH = graph.DIALECT
    EVENTS_BEFORE = graph.EVENTS_BEFORE
    RECENT_FIRST = "ORDER BY last_received_at DESC, last_event_seq DESC"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "FULL",
        lock_wait: float = LOCK_WAIT_SECONDS,
    ) -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, not {synchronous!r}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._synchronous = synchronous
        self._lock_wait = lock_wait
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._local = threading.local()
        self._file: tuple[int, int] | None = None  # the database file opened: device, inode
        self._writer = Writer(
            self._connect_writer,
            name="memvault-sqlite-writer",
            location=str(self.path),
            lock_wait=lock_wait,
            guard=self._moved,
        )
        self._writer.call(migrate)
        self._file = _identity(self.path)
        self._checkpointer = Checkpointer(self._connect)

    def _moved(self) -> StoreUnavailable | None:
        """Why nothing may be read or written now: the database file was deleted or
        replaced while this store had it open. Its connections would go on writing into a
        file nobody can open again, and a new one would start an empty database; refused,
        a hook keeps its events and sends them again once memvault is restarted."""
        if self._file is None:
            return None
        now = _identity(self.path)
        if now == self._file:
            return None
        what = "deleted" if now is None else "replaced"
        return StoreUnavailable(
            f"the database {self.path} was {what} while memvault was running; nothing was "
            "written. Restart memvault to open what is there now"
        )

    # -- connections ----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        moved = self._moved()
        if moved is not None:  # connecting would create another, empty database at the path
            raise moved
        # Readers of a WAL database wait for a lock only in rare moments (another process
        # recovering the WAL index); no longer than a write would.
        # Once the store has its file, a connection opens that file or none: the look above
        # and the open are two steps, and a deletion between them must not leave a new,
        # empty database at the path for the next start to take for the memory.
        target = self.path if self._file is None else f"{self.path.resolve().as_uri()}?mode=rw"
        try:
            conn = sqlite3.connect(
                target,
                uri=self._file is not None,
                isolation_level=None,
                check_same_thread=False,
                timeout=self._lock_wait,
            )
        except sqlite3.OperationalError:
            moved = self._moved()
            if moved is not None:
                raise moved from None
            raise
        moved = self._moved()  # another database put at the path meanwhile
        if moved is not None:
            conn.close()
            raise moved
        conn.execute(f"PRAGMA busy_timeout = {int(self._lock_wait * 1000)}")
        return conn

    def _connect_writer(self) -> sqlite3.Connection:
        conn = self._connect()
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise RuntimeError(f"could not switch {self.path} to WAL (got {mode})")
        conn.execute(f"PRAGMA synchronous = {self._synchronous}")
        conn.execute("PRAGMA busy_timeout = 0")  # the writer waits in short steps itself
        conn.execute("PRAGMA wal_autocheckpoint = 0")  # the checkpointer's job, off its path
        return conn

    def _reader(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA query_only = ON")
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def _reading(self, op: Callable[[sqlite3.Connection], T]) -> T:
        return op(self._reader())

    def _writing(self, op: Callable[[sqlite3.Connection], T]) -> T:
        return self._writer.call(op)

    # -- writes ---------------------------------------------------------------------------

    def submit_events(self, events: Sequence[NewEvent]) -> Future[list[AppendOutcome]]:
        return self._writer.submit(Batched(append_requests, list(events)))

    def sync(self) -> None:
        self._writer.call(lambda conn: None)

    # -- what every engine has ------------------------------------------------------------

    def stats(self) -> StoreStats:
        files = (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm"))
        size = sum(_size(p) for p in files)
        return store_stats(self._reader(), self.engine, str(self.path), size)

    @property
    def pending_writes(self) -> int:
        return self._writer.pending

    @property
    def write_failure(self) -> BaseException | None:
        return self._writer.failure

    def write_trouble(self) -> str | None:
        moved = self._moved()
        if moved is not None:
            return str(moved)
        locked_for = self._writer.locked_for
        if locked_for is not None and locked_for >= PROBE_WAIT:
            return (
                f"the database {self.path} is locked by another process; writes have "
                f"waited {locked_for:.1f} s"
            )
        free = shutil.disk_usage(self.path.parent).free
        if free < LOW_SPACE_BYTES:
            return f"the disk holding {self.path} is full ({free // 1024} KiB free)"
        if self._writer.trouble is None:
            return None
        # The last write failed: try a small one, so the answer changes as soon as writes
        # pass again, not only after the next request's write does.
        try:
            self._writer.submit(probe, wait=PROBE_WAIT).result(self._lock_wait + 1)
        except StoreFailure as exc:
            return str(exc)
        except TimeoutError:
            trouble = self._writer.trouble
            return None if trouble is None else str(trouble)
        return None

    def close(self) -> None:
        self._checkpointer.close()
        self._writer.close()
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()


def _identity(path: Path) -> tuple[int, int] | None:
    """The file at ``path`` (its device and inode), or None when there is none."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


def _size(path: Path) -> int:
    """A file's size; 0 when it is not there, or went between two reads (the write-ahead
    log and its index go when their last connection closes)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
