"""The SQLite side of sessions: how one is created (the rest is ``store.session_rows``)."""

from __future__ import annotations

import sqlite3

_ENSURE_SESSION = """
INSERT INTO sessions (id, project, cwd, agent_id, title, created_at, updated_at,
                      last_received_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    title = coalesce(excluded.title, sessions.title),
    updated_at = excluded.updated_at
"""


class SQLiteSessions:
    """Creating a session on the writer thread, the only writer: what it finds is so."""

    def _create_session(self, conn: sqlite3.Connection, values: tuple) -> bool:
        exists = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (values[0],)).fetchone()
        conn.execute(_ENSURE_SESSION, values)
        return exists is None
