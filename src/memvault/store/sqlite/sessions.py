"""The SQLite side of sessions and the board mirror: what its SQL does its own way
(the rest is ``store.session_rows``), on the writer thread."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from memvault.domain import BoardRow, Session, iso, utc_now
from memvault.store.session_rows import board_values
from memvault.store.sqlite.writer import Writer

_ENSURE_SESSION = """
INSERT INTO sessions (id, project, cwd, agent_id, title, created_at, updated_at,
                      last_received_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    title = coalesce(excluded.title, sessions.title),
    updated_at = excluded.updated_at
"""


class SQLiteSessions:
    """Creating a session, recording what it was given, and replacing the board mirror."""

    _writer: Writer

    get_session: Callable[[str], Session | None]

    def ensure_session(
        self,
        session_id: str,
        *,
        project: str,
        cwd: str,
        agent_id: str | None = None,
        title: str | None = None,
    ) -> Session:
        now = iso(utc_now())

        def op(conn: sqlite3.Connection) -> None:
            exists = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            conn.execute(
                _ENSURE_SESSION, (session_id, project, cwd, agent_id, title, now, now, now)
            )
            if not exists:
                conn.execute("UPDATE counters SET value = value + 1 WHERE name = 'sessions'")

        self._writer.call(op)
        session = self.get_session(session_id)
        assert session is not None
        return session

    def replace_board_rows(self, rows: Sequence[BoardRow]) -> None:
        values = board_values(list(rows))

        def op(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM board_rows")
            conn.executemany(
                "INSERT OR REPLACE INTO board_rows (session_id, agent_name, topic, summary, "
                "keywords, status, referenced_by, started_at, updated_at, position) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )

        self._writer.call(op)

    def record_injected(self, session_id: str, items: Sequence[tuple[str, str]], at: str) -> None:
        rows = [(session_id, kind, item_id, at) for kind, item_id in items]

        def op(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT OR IGNORE INTO injections (session_id, kind, item_id, injected_at) "
                "VALUES (?, ?, ?, ?)",
                rows,
            )

        if rows:
            self._writer.call(op)
