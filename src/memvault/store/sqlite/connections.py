"""Opening a SQLite store's file: connections, the schema's migrations, and the
applied version read without opening it for writing."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from memvault.store import schema

PROBE_WAIT = 0.2  # seconds a health check's write waits for another process's lock
# Less room than this left on the database's disk, and the next larger write fails.
LOW_SPACE_BYTES = 1024 * 1024


def probe(conn: sqlite3.Connection) -> None:
    """A write of one page, as small as a write gets: it needs the lock and room in the WAL."""
    conn.execute("UPDATE counters SET value = value WHERE name = 'sessions'")


def applied_schema_version(path: str | os.PathLike[str]) -> int | None:
    """The newest migration applied to the database at ``path``, read only (0 when it has
    none); None when there is no database file."""
    if not Path(path).is_file():
        return None
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return 0
        raise
    finally:
        conn.close()


def migrate(conn: sqlite3.Connection) -> None:
    def run(script: str) -> None:
        for statement in _statements(script):
            conn.execute(statement)

    schema.migrate(conn, "sqlite", run)


def _statements(script: str) -> list[str]:
    """Split a script into complete statements (trigger bodies contain semicolons)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        if not buffer and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete statement in migration: {buffer[:80]!r}")
    return statements
