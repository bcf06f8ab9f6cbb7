"""The PostgreSQL engine: several servers sharing one memory, on a connection pool.

Every write is one transaction on a pooled connection (``with self._pool.connection()``
commits on success), retried whole when the database breaks a deadlock or a serialization
conflict. Appends take the event log's advisory lock so they commit in sequence order
(``append``); jobs are claimed with ``FOR UPDATE SKIP LOCKED`` (``jobs``). Migrations run
when the store opens, by one replica at a time, under an advisory lock. ``PostgresStore``
is its parts together: PostgreSQL's own in this package, one module each, and those both
engines share (``store.log_reads``, ``store.session_rows``, ``store.contract.graph`` ...),
which read and write through ``_transaction``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import TypeVar

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from memvault.domain import (
    NewEvent,
    StoreStats,
)
from memvault.errors import StoreFailure, StoreUnavailable
from memvault.store.contract import AppendOutcome, Store
from memvault.store.log_reads import EVENT_COLUMNS, LogReads
from memvault.store.postgres import graph
from memvault.store.postgres.append import Appender
from memvault.store.postgres.derived import PostgresDerived
from memvault.store.postgres.documents import PostgresSearchIndex
from memvault.store.postgres.jobs import PostgresJobs
from memvault.store.postgres.purge import PostgresPurge
from memvault.store.postgres.sessions import PostgresSessions
from memvault.store.postgres.vault import PostgresVaultWrites
from memvault.store.schema import migrate, store_stats
from memvault.store.session_rows import BoardRows, SessionRows
from memvault.store_url import masked_url

T = TypeVar("T")

POOL_SIZE = 10  # connections at most; one is kept open
CONNECT_SECONDS = 10.0  # how long opening the store waits for its first connection
CONNECTION_WAIT = 5.0  # how long a write waits for a pooled connection, then fails
PROBE_CONNECT_SECONDS = 2  # a health check's own connection
MIGRATION_LOCK = 0x6D76_0000  # pg_advisory_xact_lock key: one replica migrates at a time
_ATTEMPTS = 5  # a transaction the database aborted to break a deadlock is run again


# Retried: the database aborted the transaction to let another pass; nothing was kept.
_RETRIED = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
_PERMANENT = (
    psycopg.DataError,
    psycopg.IntegrityError,
    psycopg.ProgrammingError,
    psycopg.NotSupportedError,
)


class PostgresStore(
    PostgresSessions,
    PostgresVaultWrites,
    PostgresJobs,
    PostgresDerived,
    PostgresPurge,
    LogReads,
    SessionRows,
    BoardRows,
    PostgresSearchIndex,
    Store,
):
    engine = "postgres"
    mark = "%s"
    GRAPH = graph.DIALECT
    EVENTS_BEFORE = (
        f"SELECT {EVENT_COLUMNS} FROM events WHERE session_id = ? AND seq <= ? "
        "ORDER BY occurred_at DESC, seq DESC LIMIT ?"
    )
    RECENT_FIRST = "ORDER BY last_received_at DESC NULLS LAST, last_event_seq DESC NULLS LAST"
    FOR_UPDATE = " FOR UPDATE"

    def __init__(
        self, url: str, *, pool_size: int = POOL_SIZE, wait: float = CONNECTION_WAIT
    ) -> None:
        self.url = url
        self._wait = wait
        self.location = masked_url(url)
        self._trouble: StoreUnavailable | None = None
        # The first connection tells at once whether the database can be reached (the
        # pool would keep trying); it applies the migrations before the pool opens.
        try:
            with psycopg.connect(url, connect_timeout=int(CONNECT_SECONDS)) as conn:
                _migrate(conn)
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(
                f"cannot connect to the PostgreSQL store {self.location}: {_first_line(exc)}"
            ) from None
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, pool_size),
            open=False,
            timeout=wait,
            check=ConnectionPool.check_connection,
            name="memvault-postgres",
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_SECONDS)
        except PoolTimeout:
            self._pool.close()
            raise StoreUnavailable(
                f"cannot connect to the PostgreSQL store {self.location}: no connection "
                f"within {CONNECT_SECONDS:g} s"
            ) from None
        self._appender = Appender(self._transaction, name="memvault-postgres-append")

    # -- transactions ---------------------------------------------------------------------

    def _transaction(self, op: Callable[[psycopg.Connection], T]) -> T:
        """Run ``op`` in one transaction on a pooled connection, committed on return; run
        again when the database aborted it to break a deadlock. A database that cannot be
        reached fails as ``StoreUnavailable`` naming it, kept for ``write_trouble`` (reads
        that pass do not clear it: a full disk still lets them)."""
        for attempt in range(_ATTEMPTS):
            try:
                with self._pool.connection() as conn:
                    return op(conn)
            except _RETRIED:
                if attempt == _ATTEMPTS - 1:
                    raise
            except (PoolTimeout, psycopg.OperationalError) as exc:
                self._trouble = self._unavailable(exc)
                raise self._trouble from exc
        raise AssertionError("unreachable")

    def transient(self, exc: BaseException) -> bool:
        # What the data or the SQL got wrong fails the same way every time.
        return isinstance(exc, psycopg.Error) and not isinstance(exc, _PERMANENT)

    def _reading(self, op: Callable[[psycopg.Connection], T]) -> T:
        return self._transaction(op)

    def _writing(self, op: Callable[[psycopg.Connection], T]) -> T:
        return self._transaction(op)

    def _read(self, sql: str, params: Sequence | dict | None = None) -> list[tuple]:
        return self._transaction(lambda conn: conn.execute(sql, params).fetchall())

    def _one(self, sql: str, params: Sequence | dict | None = None) -> tuple | None:
        return self._transaction(lambda conn: conn.execute(sql, params).fetchone())

    def _unavailable(self, exc: BaseException) -> StoreUnavailable:
        if isinstance(exc, PoolTimeout):
            # The pool only says it waited: a connection of our own says why.
            why = self._connect_failure()
            if why is None:
                cause = (
                    f"the PostgreSQL store {self.location} had no free connection for "
                    f"{self._wait:g} s (all {self._pool.max_size} busy)"
                )
            else:
                cause = f"the PostgreSQL store {self.location} cannot be reached: {why}"
        elif isinstance(exc, psycopg.errors.DiskFull):
            cause = f"the disk of the PostgreSQL store {self.location} is full"
        else:
            cause = f"the PostgreSQL store {self.location} cannot be reached: {_first_line(exc)}"
        return StoreUnavailable(f"{cause}; nothing was written")

    def _connect_failure(self) -> str | None:
        """Why a small write on a new connection fails, if it does: the database cannot be
        reached, or its disk has no room for a few new pages (an update in place would
        pass on a full disk). Nothing of it is kept."""
        try:
            with psycopg.connect(self.url, connect_timeout=PROBE_CONNECT_SECONDS) as conn:
                conn.execute("UPDATE counters SET value = value WHERE name = 'sessions'")
                conn.execute("CREATE TEMP TABLE write_probe (n integer)")
                conn.execute("INSERT INTO write_probe SELECT generate_series(1, 4000)")
                conn.rollback()
        except psycopg.errors.DiskFull:
            return "its disk is full"
        except psycopg.Error as exc:
            return _first_line(exc)
        return None

    # -- the event log --------------------------------------------------------------------

    def submit_events(self, events: Sequence[NewEvent]) -> Future[list[AppendOutcome]]:
        try:
            return self._appender.submit(list(events))
        except RuntimeError as exc:
            raise StoreFailure(f"the store {self.location} is closed") from exc

    # -- what every engine has ------------------------------------------------------------

    def stats(self) -> StoreStats:
        def op(conn: psycopg.Connection) -> StoreStats:
            (size,) = conn.execute("SELECT pg_database_size(current_database())").fetchone()
            return store_stats(conn, self.engine, self.location, size)

        return self._transaction(op)

    def sync(self) -> None:
        """Every write but an append is committed before it returns; wait for the appends
        already submitted, and the read counts queued."""
        self._appender.sync()
        self._sync_access()

    @property
    def pending_writes(self) -> int:
        """Appends submitted and not yet committed (there is no write queue besides)."""
        return self._appender.pending

    @property
    def write_failure(self) -> BaseException | None:
        """What stopped the append thread, which only a bug does; a database that cannot be
        reached is ``write_trouble`` instead, which clears once it can."""
        return self._appender.failure

    def write_trouble(self) -> str | None:
        if self._trouble is None:
            return None
        # The last write failed: try a small one on a connection of its own (the pool may
        # still be waiting to reconnect), so the answer changes as soon as writes can pass.
        why = self._connect_failure()
        if why is None:
            self._trouble = None
            return None
        return f"the PostgreSQL store {self.location} cannot take writes: {why}"

    def close(self) -> None:
        self._appender.close()
        self._close_access()
        self._pool.close()


def _migrate(conn: psycopg.Connection) -> None:
    """Apply the migrations not yet applied, in one transaction, under a lock: replicas
    starting together wait for the first, then find nothing left to do."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
    # No parameters: each script runs whole, at once.
    migrate(conn, "postgres", lambda script: conn.execute(script.encode()), mark="%s")


def applied_schema_version(url: str) -> int | None:
    """The newest migration applied to the database at ``url``, read only (0 when it has
    none); None when memvault has never opened it."""
    try:
        with psycopg.connect(url, connect_timeout=int(CONNECT_SECONDS), autocommit=True) as conn:
            (table,) = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()
            if table is None:
                return None
            (version,) = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
            return version or 0
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(
            f"cannot connect to the PostgreSQL store {masked_url(url)}: {_first_line(exc)}"
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return masked_url(text[0]) if text else type(exc).__name__
