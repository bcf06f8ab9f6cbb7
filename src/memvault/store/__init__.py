"""The store: the only code that speaks SQL.

``Store`` is the contract the rest of memvault calls, composed of parts (see ``contract``):
the event log, sessions and their watermarks, the board mirror, the job queue, derived
results, the graph and the search index. Each engine (SQLite, PostgreSQL)
implements it and must pass the same contract tests in ``tests/store``.
"""

from __future__ import annotations

from memvault.errors import MemvaultError
from memvault.store.contract import (
    LEXICAL_PARTS,
    PARTS,
    SESSION_PART,
    AppendOutcome,
    BoardMirror,
    Derived,
    EventLog,
    Graph,
    JobQueue,
    KindStamp,
    LexicalQuery,
    SearchIndex,
    Sessions,
    Store,
    StoreBase,
    part_of,
)
from memvault.store_url import engine_of, masked_url, sqlite_file, store_location

__all__ = [
    "LEXICAL_PARTS",
    "PARTS",
    "SESSION_PART",
    "AppendOutcome",
    "BoardMirror",
    "Derived",
    "EventLog",
    "Graph",
    "JobQueue",
    "KindStamp",
    "LexicalQuery",
    "SearchIndex",
    "Sessions",
    "Store",
    "StoreBase",
    "engine_of",
    "masked_url",
    "open_store",
    "part_of",
    "schema_versions",
    "sqlite_file",
    "store_location",
]


NO_POSTGRESQL = (
    "the PostgreSQL engine needs psycopg: pip install 'memvault[postgres]' (the postgres extra)"
)


def schema_versions(url: str) -> tuple[int, int] | None:
    """(applied, newest known) schema versions of the store at ``url``, read without
    opening it for writing or migrating it; None when there is no store there yet."""
    from memvault.store import migrations

    if engine_of(url) == "postgres":
        _need_psycopg()
        from memvault.store.postgres import applied_schema_version as postgres_version

        applied = postgres_version(url)
        newest = migrations.load("postgres")[-1].version
    else:
        from memvault.store.sqlite import applied_schema_version

        applied = applied_schema_version(sqlite_file(url))
        newest = migrations.load("sqlite")[-1].version
    return None if applied is None else (applied, newest)


def open_store(
    url: str,
    *,
    synchronous: str = "FULL",
    lock_wait: float | None = None,
    pool_size: int | None = None,
) -> Store:
    """Open a store from its URL (see ``engine_of``). ``lock_wait`` bounds how long a write
    waits for another process's lock (SQLite) or for a connection (PostgreSQL);
    ``synchronous`` is SQLite's, ``pool_size`` PostgreSQL's."""
    if engine_of(url) == "postgres":
        _need_psycopg()
        from memvault.store.postgres import CONNECTION_WAIT, POOL_SIZE, PostgresStore

        return PostgresStore(
            url,
            pool_size=POOL_SIZE if pool_size is None else pool_size,
            wait=CONNECTION_WAIT if lock_wait is None else lock_wait,
        )
    path = sqlite_file(url)
    from memvault.store.sqlite import SQLiteStore
    from memvault.store.sqlite.writer import LOCK_WAIT_SECONDS

    wait = LOCK_WAIT_SECONDS if lock_wait is None else lock_wait
    return SQLiteStore(path, synchronous=synchronous, lock_wait=wait)


def _need_psycopg() -> None:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise MemvaultError(NO_POSTGRESQL) from None
