"""The PostgreSQL side of sessions and the board mirror: how a session is created and
how replicas take turns replacing the mirror (the rest is ``store.session_rows``)."""

from __future__ import annotations

import psycopg

BOARD_LOCK = 0x6D76_0003  # replacing the board mirror: one replica at a time

# ``xmax = 0``: the row was inserted, not updated (a replica creating the same session at
# once waits on the row, then updates it).
_ENSURE_SESSION = """
INSERT INTO sessions (id, project, cwd, agent_id, title, created_at, updated_at,
                      last_received_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (id) DO UPDATE SET
    title = coalesce(excluded.title, sessions.title),
    updated_at = excluded.updated_at
RETURNING xmax = 0
"""


class PostgresSessions:
    """Creating a session and taking the board's turn, in the caller's transaction."""

    def _create_session(self, conn: psycopg.Connection, values: tuple) -> bool:
        (created,) = conn.execute(_ENSURE_SESSION, values).fetchone()
        return bool(created)

    def _lock_board(self, conn: psycopg.Connection) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (BOARD_LOCK,))
