"""Sessions, their watermarks and the board mirror, written once for both engines.

Creating a session is the contract part's own (``contract.sessions``). How a session is
inserted (and whether it was new) and how replicas take turns replacing the mirror each
engine says itself, in its ``sessions`` module.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from memvault import jsontext
from memvault.domain import BoardRow, Session, Watermark, iso, utc_now
from memvault.store.engine import Engine
from memvault.store.rows import BOARD_COLUMNS
from memvault.store.rows import board_row as _board_row
from memvault.store.rows import session as _session

SESSION_COLUMNS = """
id, project, cwd, agent_id, title, board_session_id, created_at, first_event_at,
last_event_at, event_count, observation_count, summarized_at, summarized_seq, extracted_at,
extracted_seq, reflected_at, reflected_seq, graph_extracted_at, graph_extracted_seq,
summary_revision, summarized_observation_count, last_sweep_attempt_at, compressed_at,
compressed_seq
"""


def board_values(rows: list[BoardRow]) -> list[tuple]:
    """The mirror's rows as written, each with its place on the board."""
    return [
        (
            r.session_id,
            r.agent_name,
            r.topic,
            r.summary,
            r.keywords,
            r.status,
            jsontext.dumps(r.referenced_by),
            r.started_at,
            r.updated_at,
            position,
        )
        for position, r in enumerate(rows)
    ]


class SessionRows(Engine):
    """The sessions part's reads and watermark moves (a mixin of each store). The engine
    hands in its order of recent sessions (``RECENT_FIRST``) and the summary row's lock
    (``FOR_UPDATE``: a replica writing the same summary waits, then finds it moved)."""

    RECENT_FIRST: str
    FOR_UPDATE: str = ""

    def record_injected(
        self, session_id: str, items: Sequence[tuple[str, str]], at: str, *, asked: bool
    ) -> None:
        # Each once: PostgreSQL refuses to update one row twice in a statement.
        rows = [
            (session_id, kind, item_id, at, int(asked)) for kind, item_id in dict.fromkeys(items)
        ]
        sql = "INSERT INTO injections (session_id, kind, item_id, injected_at, asked) "
        sql += "VALUES {rows} ON CONFLICT (session_id, kind, item_id) DO UPDATE SET asked = 1 "
        sql += "WHERE excluded.asked = 1"
        if rows:
            self._writing(lambda conn: self._write_rows(conn, sql, rows, each="(?, ?, ?, ?, ?)"))

    def get_session(self, session_id: str) -> Session | None:
        row = self._select_one(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        )
        return _session(row) if row else None

    def list_sessions(
        self, *, limit: int, offset: int = 0, agent_id: str | None = None
    ) -> list[Session]:
        where, params = (
            ("", (limit, offset))
            if agent_id is None
            else (
                "WHERE agent_id = ? ",
                (agent_id, limit, offset),
            )
        )
        rows = self._select(
            f"SELECT {SESSION_COLUMNS} FROM sessions {where}{self.RECENT_FIRST} LIMIT ? OFFSET ?",
            params,
        )
        return [_session(row) for row in rows]

    def forget_injected(self, session_id: str, *, through: str) -> None:
        self._change(
            "DELETE FROM injections WHERE session_id = ? AND injected_at <= ?",
            (session_id, through),
        )

    def injected(self, session_id: str) -> dict[tuple[str, str], bool]:
        rows = self._select(
            "SELECT kind, item_id, asked FROM injections WHERE session_id = ?", (session_id,)
        )
        return {(row[0], row[1]): bool(row[2]) for row in rows}

    def advance_extraction(self, session_id: str, through: Watermark) -> bool:
        move = self._sql(
            "UPDATE sessions SET extracted_at = ?, extracted_seq = ? "
            "WHERE id = ? AND coalesce(extracted_seq, 0) < ?"
        )
        drop = self._sql("DELETE FROM pipeline_results WHERE kind = ? AND session_id = ?")

        def op(conn) -> bool:
            moved = conn.execute(move, (through.at, through.seq, session_id, through.seq)).rowcount
            conn.execute(drop, ("extract", session_id))
            return moved == 1

        return self._writing(op)

    def sessions_to_summarize(
        self, *, threshold: int, idle_before: str, retry_before: str, limit: int
    ) -> list[str]:
        rows = self._select(
            "SELECT id FROM sessions WHERE observation_count > summarized_observation_count "
            "AND (observation_count - summarized_observation_count >= ? "
            "     OR last_received_at < ?) "
            "AND (last_sweep_attempt_at IS NULL OR last_sweep_attempt_at < ?) "
            "ORDER BY last_received_at LIMIT ?",
            (threshold, idle_before, retry_before, limit),
        )
        return [row[0] for row in rows]

    def mark_summary_attempt(self, session_id: str, at: str) -> None:
        self._change("UPDATE sessions SET last_sweep_attempt_at = ? WHERE id = ?", (at, session_id))

    def session_summary(self, session_id: str) -> tuple[dict, int] | None:
        row = self._select_one(
            "SELECT summary, revision FROM session_summaries WHERE session_id = ?", (session_id,)
        )
        return (json.loads(row[0]), row[1]) if row else None

    def write_summary(
        self, session_id: str, summary: dict, *, through: Watermark, observations: int
    ) -> bool:
        now = iso(utc_now())
        current = self._sql(
            f"SELECT summarized_seq, summary_revision FROM sessions WHERE id = ?{self.FOR_UPDATE}"
        )
        keep = self._sql(
            "INSERT INTO session_summaries (session_id, summary, revision, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
            "summary = excluded.summary, revision = excluded.revision, "
            "updated_at = excluded.updated_at"
        )
        move = self._sql(
            "UPDATE sessions SET summarized_at = ?, summarized_seq = ?, "
            "summary_revision = ?, summarized_observation_count = ? WHERE id = ?"
        )

        def op(conn) -> bool:
            before = conn.execute(current, (session_id,)).fetchone()
            if before is None or (before[0] or 0) >= (through.seq or 0):
                return False  # another run got there first
            revision = before[1] + 1
            conn.execute(keep, (session_id, jsontext.dumps(summary), revision, now))
            conn.execute(move, (through.at, through.seq, revision, observations, session_id))
            return True

        return self._writing(op)


class BoardRows(Engine):
    """The board mirror's part both engines share (a mixin of each store)."""

    def _lock_board(self, conn) -> None:
        """Taken before the mirror is replaced (replicas take turns on PostgreSQL)."""

    def replace_board_rows(self, rows: Sequence[BoardRow]) -> None:
        # One row per session, the last of the same id as one after another would leave it
        # (PostgreSQL refuses to change a row twice in one statement).
        values = list({value[0]: value for value in board_values(list(rows))}.values())
        sql = (
            "INSERT INTO board_rows (session_id, agent_name, topic, summary, keywords, "
            "status, referenced_by, started_at, updated_at, position) VALUES {rows} "
            "ON CONFLICT (session_id) DO UPDATE SET agent_name = excluded.agent_name, "
            "topic = excluded.topic, summary = excluded.summary, "
            "keywords = excluded.keywords, status = excluded.status, "
            "referenced_by = excluded.referenced_by, started_at = excluded.started_at, "
            "updated_at = excluded.updated_at, position = excluded.position"
        )

        def op(conn) -> None:
            # Each replacing writer leaves exactly its rows.
            self._lock_board(conn)
            conn.execute("DELETE FROM board_rows")
            self._write_rows(conn, sql, values, each=f"({', '.join('?' * 10)})")

        self._writing(op)

    def link_board_session(
        self, session_id: str, board_session_id: str, *, replacing: str | None = None
    ) -> bool:
        changed = self._change(
            "UPDATE sessions SET board_session_id = ?, updated_at = ? "
            "WHERE id = ? AND (board_session_id IS NULL OR board_session_id = ?)",
            (board_session_id, iso(utc_now()), session_id, replacing),
        )
        return changed == 1

    def board_links(self) -> dict[str, tuple[str, str]]:
        rows = self._select(
            "SELECT board_session_id, id, project FROM sessions WHERE board_session_id IS NOT NULL"
        )
        return {row[0]: (row[1], row[2]) for row in rows}

    def board_last_events(self) -> dict[str, str]:
        # Never later than it was received: ingest dates events so, and a store written
        # before it did may hold events dated by a host clock set ahead.
        rows = self._select(
            "SELECT board_session_id, CASE WHEN last_received_at IS NOT NULL"
            " AND last_received_at < last_event_at THEN last_received_at"
            " ELSE last_event_at END FROM sessions"
            " WHERE board_session_id IS NOT NULL AND last_event_at IS NOT NULL"
        )
        return {row[0]: row[1] for row in rows}

    def board_session_taken(self, board_session_id: str) -> bool:
        row = self._select_one(
            "SELECT 1 FROM sessions WHERE board_session_id = ?", (board_session_id,)
        )
        return row is not None

    def board_rows(self, *, status: str | None = None, limit: int = 1000) -> list[BoardRow]:
        where, params = ("", (limit,)) if status is None else ("WHERE status = ? ", (status, limit))
        rows = self._select(
            f"SELECT {BOARD_COLUMNS} FROM board_rows {where}ORDER BY position LIMIT ?", params
        )
        return [_board_row(row) for row in rows]

    def board_row(self, session_id: str) -> BoardRow | None:
        rows = self._select(
            f"SELECT {BOARD_COLUMNS} FROM board_rows WHERE session_id = ?", (session_id,)
        )
        return next((_board_row(row) for row in rows), None)

    def board_row_count(self) -> int:
        # The board is a file a person reads: hundreds of rows, not the event log's millions.
        row = self._select_one("SELECT count(*) FROM board_rows")
        return row[0] if row else 0
