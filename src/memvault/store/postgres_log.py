"""Reading the PostgreSQL event log: events and their observations, by session, by
sequence (for followers) and by event time.

A mixin of ``PostgresStore``, reading through its ``_read``, ``_one`` and ``_transaction``
(each a transaction on a pooled connection). Followers can trust reading by sequence: an
append commits in the order of its numbers (see ``postgres_append``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from memvault.domain import Event, Observation
from memvault.store import postgres_pipeline as pipeline
from memvault.store.rows import observation as _observation

_EVENT_COLUMNS = (
    "seq, session_id, client_event_id, hook_type, project, cwd, agent_id, "
    "client_timestamp, occurred_at, received_at, payload"
)

_OBSERVATION_COLUMNS = """
o.event_seq, o.session_id, e.client_event_id, o.occurred_at, o.hook_type, o.type,
o.title, o.narrative, o.facts, o.files, o.concepts, o.importance, o.derived_by, o.updated_at
"""


class PostgresEventLog:
    _read: Callable[..., list[tuple]]
    _one: Callable[..., tuple | None]
    _transaction: Callable[[Callable[[psycopg.Connection], Any]], Any]

    def events_after(self, session_id: str, seq: int, *, limit: int) -> list[Event]:
        rows = self._read(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE session_id = %s AND seq > %s "
            "ORDER BY seq LIMIT %s",
            (session_id, seq, limit),
        )
        return [_event(row) for row in rows]

    def log_after(self, seq: int, *, limit: int) -> list[Event]:
        rows = self._read(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE seq > %s ORDER BY seq LIMIT %s",
            (seq, limit),
        )
        return [_event(row) for row in rows]

    def events_before(self, session_id: str, seq: int, *, limit: int) -> list[Event]:
        rows = self._read(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE session_id = %s AND seq <= %s "
            "ORDER BY occurred_at DESC, seq DESC LIMIT %s",
            (session_id, seq, limit),
        )
        return [_event(row) for row in reversed(rows)]

    def list_events(self, session_id: str, *, limit: int, offset: int = 0) -> list[Event]:
        rows = self._read(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE session_id = %s "
            "ORDER BY occurred_at, seq LIMIT %s OFFSET %s",
            (session_id, limit, offset),
        )
        return [_event(row) for row in rows]

    def last_event_seq(self) -> int:
        row = self._one("SELECT max(seq) FROM events")
        return (row[0] if row else None) or 0

    def observations_of(self, seqs: Sequence[int]) -> list[Observation]:
        wanted = list(seqs)
        if not wanted:
            return []
        rows = self._read(
            f"SELECT {_OBSERVATION_COLUMNS} FROM observations o "
            "JOIN events e ON e.seq = o.event_seq "
            "WHERE o.event_seq = ANY(%s::bigint[]) ORDER BY o.event_seq",
            (wanted,),
        )
        return [_observation(row) for row in rows]

    def list_observations(
        self, session_id: str, *, limit: int, offset: int = 0
    ) -> list[Observation]:
        rows = self._read(
            f"SELECT {_OBSERVATION_COLUMNS} FROM events e "
            "JOIN observations o ON o.event_seq = e.seq WHERE e.session_id = %s "
            "ORDER BY e.occurred_at, e.seq LIMIT %s OFFSET %s",
            (session_id, limit, offset),
        )
        return [_observation(row) for row in rows]

    def observations_after(self, seq: int, *, limit: int) -> list[tuple[Observation, str]]:
        rows = self._read(
            f"SELECT {_OBSERVATION_COLUMNS}, e.project FROM observations o "
            "JOIN events e ON e.seq = o.event_seq WHERE o.event_seq > %s "
            "ORDER BY o.event_seq LIMIT %s",
            (seq, limit),
        )
        return [(_observation(row), row[-1]) for row in rows]

    def observation_window(
        self, session_id: str, first: tuple[str, int], last: tuple[str, int], *, margin: int
    ) -> list[tuple[Observation, str]]:
        select = (
            f"SELECT {_OBSERVATION_COLUMNS}, e.project FROM events e "
            "JOIN observations o ON o.event_seq = e.seq WHERE e.session_id = %s "
        )

        def op(conn: psycopg.Connection) -> list[tuple]:
            before = conn.execute(
                select + "AND (e.occurred_at, e.seq) < (%s, %s) "
                "ORDER BY e.occurred_at DESC, e.seq DESC LIMIT %s",
                (session_id, *first, margin),
            ).fetchall()
            middle = conn.execute(
                select + "AND (e.occurred_at, e.seq) >= (%s, %s) "
                "AND (e.occurred_at, e.seq) <= (%s, %s) ORDER BY e.occurred_at, e.seq",
                (session_id, *first, *last),
            ).fetchall()
            after = conn.execute(
                select + "AND (e.occurred_at, e.seq) > (%s, %s) "
                "ORDER BY e.occurred_at, e.seq LIMIT %s",
                (session_id, *last, margin),
            ).fetchall()
            return [*reversed(before), *middle, *after]

        return [(_observation(row), row[-1]) for row in self._transaction(op)]

    def observation_changes(self, after: int, *, limit: int) -> list[tuple[int, int]]:
        return self._transaction(lambda conn: pipeline.observation_changes(conn, after, limit))

    def observations_since(self, seq: int) -> int:
        row = self._one("SELECT count(*) FROM observations WHERE event_seq > %s", (seq,))
        return row[0] if row else 0


def _event(row: tuple) -> Event:
    return Event(*row[:10], payload=json.loads(row[10]))
