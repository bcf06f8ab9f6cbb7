"""Reading the event log, written once for both engines: events and their observations,
by session, by sequence (for followers) and by event time.

Followers can trust reading by sequence on either engine: SQLite has one writer, and a
PostgreSQL append commits in the order of its numbers (see ``postgres.append``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from memvault.domain import Event, Observation
from memvault.store.engine import Engine
from memvault.store.rows import observation as _observation

EVENT_COLUMNS = (
    "seq, session_id, client_event_id, hook_type, project, cwd, agent_id, "
    "client_timestamp, occurred_at, received_at, payload"
)

OBSERVATION_COLUMNS = """
o.event_seq, o.session_id, e.client_event_id, o.occurred_at, o.hook_type, o.type,
o.title, o.narrative, o.facts, o.files, o.concepts, o.importance, o.derived_by, o.updated_at
"""


def event(row: tuple) -> Event:
    return Event(*row[:10], payload=json.loads(row[10]))


class LogReads(Engine):
    """The event log's reads (a mixin of each store); the engine hands in how it reads the
    events before a watermark (``EVENTS_BEFORE``, through the index its planner needs)."""

    EVENTS_BEFORE: str

    def events_after(self, session_id: str, seq: int, *, limit: int) -> list[Event]:
        rows = self._select(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE session_id = ? AND seq > ? "
            "ORDER BY seq LIMIT ?",
            (session_id, seq, limit),
        )
        return [event(row) for row in rows]

    def log_after(self, seq: int, *, limit: int) -> list[Event]:
        rows = self._select(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
            (seq, limit),
        )
        return [event(row) for row in rows]

    def events_before(self, session_id: str, seq: int, *, limit: int) -> list[Event]:
        rows = self._select(self.EVENTS_BEFORE, (session_id, seq, limit))
        return [event(row) for row in reversed(rows)]

    def list_events(
        self,
        session_id: str,
        *,
        limit: int,
        offset: int = 0,
        hook_types: Sequence[str] | None = None,
    ) -> list[Event]:
        where, params = "session_id = ?", [session_id]
        if hook_types is not None:
            if not hook_types:
                return []
            where += f" AND hook_type IN ({', '.join('?' * len(hook_types))})"
            params += list(hook_types)
        rows = self._select(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE {where} "
            "ORDER BY occurred_at, seq LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [event(row) for row in rows]

    def events_of(self, seqs: Sequence[int]) -> list[Event]:
        rows = self._select_in(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE seq IN ({{marks}}) ORDER BY seq", seqs
        )
        return sorted((event(row) for row in rows), key=lambda e: e.seq)

    def last_event_seq(self) -> int:
        row = self._select_one("SELECT max(seq) FROM events")
        return (row[0] if row else None) or 0

    def events_of_hook(self, hook_type: str, after: int, through: int) -> list[Event]:
        # A range of the primary key: as long as the range, whatever the table's length.
        rows = self._select(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE seq > ? AND seq <= ? AND hook_type = ? "
            "ORDER BY seq",
            (after, through, hook_type),
        )
        return [event(row) for row in rows]

    def first_seq_received_since(self, when: str) -> int:
        # Events arrive in sequence order, so their arrival times grow with it: a binary
        # search over the primary key, a few lookups however long the log.
        low, high = 0, self.last_event_seq() + 1
        while low < high:
            middle = (low + high) // 2
            row = self._select_one(
                "SELECT received_at FROM events WHERE seq >= ? ORDER BY seq LIMIT 1", (middle,)
            )
            if row is None or row[0] >= when:
                high = middle
            else:
                low = middle + 1
        return low

    def list_observations(
        self, session_id: str, *, limit: int, offset: int = 0
    ) -> list[Observation]:
        rows = self._select(
            f"SELECT {OBSERVATION_COLUMNS} FROM events e "
            "JOIN observations o ON o.event_seq = e.seq WHERE e.session_id = ? "
            "ORDER BY e.occurred_at, e.seq LIMIT ? OFFSET ?",
            (session_id, limit, offset),
        )
        return [_observation(row) for row in rows]

    def observations_after(self, seq: int, *, limit: int) -> list[tuple[Observation, str]]:
        rows = self._select(
            f"SELECT {OBSERVATION_COLUMNS}, e.project FROM observations o "
            "JOIN events e ON e.seq = o.event_seq WHERE o.event_seq > ? "
            "ORDER BY o.event_seq LIMIT ?",
            (seq, limit),
        )
        return [(_observation(row), row[-1]) for row in rows]

    def observation_window(
        self, session_id: str, first: tuple[str, int], last: tuple[str, int], *, margin: int
    ) -> list[tuple[Observation, str]]:
        select = (
            f"SELECT {OBSERVATION_COLUMNS}, e.project FROM events e "
            "JOIN observations o ON o.event_seq = e.seq WHERE e.session_id = ? "
        )
        before = self._sql(
            select + "AND (e.occurred_at, e.seq) < (?, ?) "
            "ORDER BY e.occurred_at DESC, e.seq DESC LIMIT ?"
        )
        middle = self._sql(
            select + "AND (e.occurred_at, e.seq) >= (?, ?) AND (e.occurred_at, e.seq) <= (?, ?) "
            "ORDER BY e.occurred_at, e.seq"
        )
        after = self._sql(
            select + "AND (e.occurred_at, e.seq) > (?, ?) ORDER BY e.occurred_at, e.seq LIMIT ?"
        )

        def op(conn) -> list[tuple]:
            early = conn.execute(before, (session_id, *first, margin)).fetchall()
            inside = conn.execute(middle, (session_id, *first, *last)).fetchall()
            late = conn.execute(after, (session_id, *last, margin)).fetchall()
            return [*reversed(early), *inside, *late]

        return [(_observation(row), row[-1]) for row in self._reading(op)]

    def sessions_between(self, after: int, through: int) -> dict[str, str]:
        rows = self._select(
            "SELECT session_id, max(project) FROM events WHERE seq > ? AND seq <= ? "
            "GROUP BY session_id",
            (after, through),
        )
        return {row[0]: row[1] for row in rows}

    def observations_since(self, seq: int) -> int:
        # A range of the primary key: as long as the backlog, not the table.
        row = self._select_one("SELECT count(*) FROM observations WHERE event_seq > ?", (seq,))
        return row[0] if row else 0

    def observations_of(self, seqs: Sequence[int]) -> list[Observation]:
        rows = self._select_in(
            f"SELECT {OBSERVATION_COLUMNS} FROM observations o "
            "JOIN events e ON e.seq = o.event_seq WHERE o.event_seq IN ({marks}) "
            "ORDER BY o.event_seq",
            seqs,
        )
        return [_observation(row) for row in rows]
