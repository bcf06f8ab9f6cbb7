"""The store: the only code that speaks SQL.

``Store`` is the contract the rest of memvault calls, composed of parts (see ``contract``):
the event log, sessions and their watermarks, the board mirror, the job queue, derived
results, the graph and the search index. Each engine (SQLite, PostgreSQL)
implements it and must pass the same contract tests in ``tests/store``.
"""

from __future__ import annotations

import re

from memvault.errors import MemvaultError
from memvault.store.contract import (
    PARTS,
    AppendOutcome,
    BoardMirror,
    Derived,
    EventLog,
    Graph,
    JobQueue,
    LexicalQuery,
    SearchIndex,
    Sessions,
    Store,
    StoreBase,
)

__all__ = [
    "PARTS",
    "AppendOutcome",
    "BoardMirror",
    "Derived",
    "EventLog",
    "Graph",
    "JobQueue",
    "LexicalQuery",
    "SearchIndex",
    "Sessions",
    "Store",
    "StoreBase",
    "engine_of",
    "masked_url",
    "open_store",
    "schema_versions",
    "sqlite_file",
    "store_location",
]


POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")
NO_POSTGRESQL = (
    "the PostgreSQL engine needs psycopg: pip install 'memvault[postgres]' (the postgres extra)"
)


def engine_of(url: str) -> str:
    """The engine a store URL names: ``postgres`` for ``postgresql://`` and ``postgres://``,
    ``sqlite`` for ``sqlite:///path`` or a bare path. Any other scheme is refused."""
    if url.startswith(POSTGRESQL_SCHEMES):
        return "postgres"
    sqlite_file(url)
    return "sqlite"


def sqlite_file(url: str) -> str:
    """The file a SQLite store URL names: ``sqlite:///path`` (``sqlite:////abs/path`` for an
    absolute one) or a bare path. Any other engine's URL is refused: what needs a file
    (a path to show, a file to copy) has none on PostgreSQL."""
    if url.startswith(POSTGRESQL_SCHEMES):
        raise ValueError(f"{masked_url(url)} is a PostgreSQL store, not a SQLite file")
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///")
    if "://" in url:
        raise ValueError(f"{url.split('://')[0]}:// names no engine memvault has")
    return url


def masked_url(url: str) -> str:
    """A store URL as it may be shown: a password in it is left out."""
    return _PASSWORD_PARAMETER.sub(r"\1***", _CREDENTIALS.sub(r"://\1:***@", url))


def store_location(url: str) -> str:
    """Where the store at ``url`` is, as a person is told: the SQLite file, or the
    PostgreSQL URL without its password."""
    return masked_url(url) if engine_of(url) == "postgres" else sqlite_file(url)


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
    from memvault.store.writer import LOCK_WAIT_SECONDS

    wait = LOCK_WAIT_SECONDS if lock_wait is None else lock_wait
    return SQLiteStore(path, synchronous=synchronous, lock_wait=wait)


_CREDENTIALS = re.compile(r"://([^:/@]*):[^@/]*@")
_PASSWORD_PARAMETER = re.compile(r"([?&]password=)[^&]*")


def _need_psycopg() -> None:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise MemvaultError(NO_POSTGRESQL) from None
