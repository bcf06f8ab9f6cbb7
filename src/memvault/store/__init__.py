"""The store: the only code that speaks SQL.

``Store`` is the contract the rest of memvault calls, composed of parts (see ``contract``):
the event log, sessions and their watermarks, the board mirror, the job queue, derived
results, the graph and the search index. Each engine (SQLite now, PostgreSQL later)
implements it and must pass the same contract tests in ``tests/store``.
"""

from __future__ import annotations

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
    "open_store",
    "schema_versions",
    "sqlite_file",
]


POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")
NO_POSTGRESQL = "the PostgreSQL engine is not part of this version"


def sqlite_file(url: str) -> str:
    """The file a SQLite store URL names: ``sqlite:///path`` (``sqlite:////abs/path`` for an
    absolute one) or a bare path. Any other engine's URL is refused."""
    if url.startswith(POSTGRESQL_SCHEMES):
        raise ValueError(NO_POSTGRESQL)
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///")
    if "://" in url:
        raise ValueError(f"{url.split('://')[0]}:// names no engine memvault has")
    return url


def schema_versions(url: str) -> tuple[int, int] | None:
    """(applied, newest known) schema versions of the store at ``url``, read without
    opening it for writing or migrating it; None when there is no store there yet."""
    from memvault.store import migrations
    from memvault.store.sqlite import applied_schema_version

    applied = applied_schema_version(sqlite_file(url))
    if applied is None:
        return None
    return applied, migrations.load("sqlite")[-1].version


def open_store(url: str, *, synchronous: str = "FULL", lock_wait: float | None = None) -> Store:
    """Open a store from its URL (see ``sqlite_file``). ``lock_wait`` bounds how long a
    write waits for another process's lock."""
    path = sqlite_file(url)
    from memvault.store.sqlite import SQLiteStore
    from memvault.store.writer import LOCK_WAIT_SECONDS

    wait = LOCK_WAIT_SECONDS if lock_wait is None else lock_wait
    return SQLiteStore(path, synchronous=synchronous, lock_wait=wait)
