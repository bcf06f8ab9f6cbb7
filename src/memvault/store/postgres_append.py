"""Appending events to the PostgreSQL log: the hot path of ingest, shared by replicas.

A batch is one transaction that first takes the event log's advisory lock, so appends from
every replica commit one after another, in the order of the sequence numbers they drew: a
follower reading by sequence (``log_after``, ``observations_after``) never passes a number
that commits later. Under the lock the lookup of stored ids is authoritative; the insert
still says ``ON CONFLICT DO NOTHING`` against the unique client id, and a row it skipped
sends the whole transaction round again, so an id is stored once whoever writes it.

The batch is written in a few statements (arrays unnested into each table); if any of it
fails, it is redone event by event under savepoints, so only the culprit fails. Since
appends take turns on the lock anyway, each store appends from one thread (``Appender``)
that writes whatever callers queued meanwhile in one transaction: a burst of hook events
costs one turn, not one each.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import psycopg

from memvault import jsontext
from memvault.domain import AppendFailure, AppendResult, NewEvent, observation_id
from memvault.store import AppendOutcome

# pg_advisory_xact_lock keys: one per log whose numbers followers read in order.
EVENT_LOG_LOCK = 0x6D76_0001
OBSERVATION_CHANGES_LOCK = 0x6D76_0002


class LostRace(Exception):
    """An id this transaction meant to insert was stored meanwhile: run it again."""


_INSERT_EVENTS = """
INSERT INTO events (seq, session_id, client_event_id, hook_type, project, cwd, agent_id,
                    client_timestamp, occurred_at, received_at, payload)
SELECT * FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
                     %s::text[], %s::text[], %s::text[], %s::text[], %s::text[])
ON CONFLICT (session_id, client_event_id) DO NOTHING
RETURNING seq
"""

_INSERT_OBSERVATIONS = """
INSERT INTO observations (event_seq, session_id, occurred_at, hook_type, type, title,
                          narrative, facts, files, concepts, importance, derived_by, updated_at)
SELECT s, sid, occ, hook, t, title, narr, facts, files, concepts, imp, 'synthetic', upd
FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
            %s::text[], %s::text[], %s::text[], %s::text[], %s::integer[], %s::text[])
    AS v(s, sid, occ, hook, t, title, narr, facts, files, concepts, imp, upd)
"""

# One statement: the sessions touched (xmax = 0 on a returned row: inserted, not updated,
# a session new to the log) and the counters.
_TOUCH_SESSIONS = """
WITH touched AS (
    INSERT INTO sessions (id, project, cwd, agent_id, created_at, updated_at, first_event_at,
                          last_event_at, last_received_at, event_count, observation_count,
                          last_event_seq)
    SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
                         %s::text[], %s::text[], %s::text[], %s::text[], %s::integer[],
                         %s::integer[], %s::bigint[])
    ON CONFLICT (id) DO UPDATE SET
        first_event_at = least(sessions.first_event_at, excluded.first_event_at),
        last_event_at = greatest(sessions.last_event_at, excluded.last_event_at),
        last_received_at = excluded.last_received_at,
        last_event_seq = excluded.last_event_seq,
        event_count = sessions.event_count + excluded.event_count,
        observation_count = sessions.observation_count + excluded.observation_count,
        updated_at = excluded.updated_at
    RETURNING xmax = 0 AS created
)
UPDATE counters SET value = value + CASE
    WHEN name = 'sessions' THEN (SELECT count(*) FROM touched WHERE created) ELSE %s END
WHERE name IN ('events', 'observations', 'sessions')
"""

# Errors that are the connection's or the transaction's, not one event's: the whole
# transaction fails (and may be tried again), never a single event.
_TRANSACTION_ERRORS = (
    LostRace,
    psycopg.OperationalError,
    psycopg.errors.SerializationFailure,
    psycopg.errors.DeadlockDetected,
)


MAX_BATCH = 2000  # events written in one transaction at most

Transaction = Callable[[Callable[[psycopg.Connection], Any]], Any]


class Appender:
    """One thread that appends what callers queue, merging what waits into one transaction.

    ``transaction(op)`` runs ``op`` in a committed transaction (the store's). Each caller's
    future gets its own events' outcomes; a transaction that fails whole (the database
    cannot be reached) fails the futures of every caller in it.
    """

    def __init__(self, transaction: Transaction, *, name: str) -> None:
        self._transaction = transaction
        self._queue: deque[tuple[list[NewEvent], Future]] = deque()
        self._ready = threading.Condition()
        self._writing = 0
        self._closed = False
        self.failure: BaseException | None = None  # what stopped the thread, if anything did
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def pending(self) -> int:
        """Submissions queued or being written."""
        with self._ready:
            return len(self._queue) + self._writing

    def submit(self, events: list[NewEvent]) -> Future[list[AppendOutcome]]:
        future: Future[list[AppendOutcome]] = Future()
        with self._ready:
            if self._closed:
                raise RuntimeError("the appender is closed")
            self._queue.append((events, future))
            self._ready.notify()
        return future

    def sync(self) -> None:
        """Wait until everything submitted so far is written (or failed)."""
        with self._ready:
            self._ready.wait_for(lambda: not self._queue and not self._writing)

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify_all()
        self._thread.join()

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # a bug: say so (health turns critical), fail the rest
            self.failure = exc
            with self._ready:
                self._closed = True
                waiting, self._writing = list(self._queue), 0
                self._queue.clear()
                self._ready.notify_all()
            for _, future in waiting:
                future.set_exception(exc)
            raise

    def _loop(self) -> None:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: self._queue or self._closed)
                if not self._queue:
                    return
                taken, size = [], 0
                while self._queue and (not taken or size + len(self._queue[0][0]) <= MAX_BATCH):
                    events, future = self._queue.popleft()
                    taken.append((events, future))
                    size += len(events)
                self._writing = len(taken)
            self._write(taken)
            with self._ready:
                self._writing = 0
                self._ready.notify_all()

    def _write(self, taken: list[tuple[list[NewEvent], Future]]) -> None:
        live = [
            (events, future) for events, future in taken if future.set_running_or_notify_cancel()
        ]
        merged = [event for events, _ in live for event in events]
        try:
            outcomes = self._transaction(lambda conn: append(conn, merged))
        except BaseException as exc:
            for _, future in live:
                future.set_exception(exc)
            return
        start = 0
        for events, future in live:
            future.set_result(outcomes[start : start + len(events)])
            start += len(events)


def append(conn: psycopg.Connection, events: list[NewEvent]) -> list[AppendOutcome]:
    """Append a batch in one transaction; if anything fails, redo it event by event so only
    the culprit fails."""
    if not events:
        return []
    # Pipelined: statements go without waiting for each answer, so the lock is held for
    # two round trips to the database, not one per statement.
    with conn.pipeline():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (EVENT_LOG_LOCK,))
        try:
            with conn.transaction():
                return _append_together(conn, events)
        except _TRANSACTION_ERRORS:
            raise
        except Exception:
            if conn.broken:
                raise
        outcomes: list[AppendOutcome] = []
        for event in events:
            try:
                with conn.transaction():
                    outcomes.extend(_append_together(conn, [event]))
            except _TRANSACTION_ERRORS:
                raise
            except Exception as exc:  # one event that cannot be stored fails alone
                if conn.broken:
                    raise
                outcomes.append(AppendFailure(event.session_id, event.client_event_id, str(exc)))
        return outcomes


def _append_together(conn: psycopg.Connection, events: list[NewEvent]) -> list[AppendOutcome]:
    # Under the lock, the last number issued cannot change until this transaction ends.
    issued = conn.execute("SELECT value FROM sequences WHERE name = 'events'")
    known = _stored_ids(conn, events)
    fresh: list[NewEvent] = []
    # Per event: the seq it already has, or (as -1 - i) the i-th fresh event's, to come.
    places: list[int] = []
    for event in events:
        key = (event.session_id, event.client_event_id)
        if event.client_event_id is not None and key in known:
            places.append(known[key])
            continue
        places.append(-1 - len(fresh))
        if event.client_event_id is not None:
            known[key] = -1 - len(fresh)  # a repeat later in the batch is this one
        fresh.append(event)
    seqs: list[int] = []
    if fresh:
        first = issued.fetchone()[0] + 1
        seqs = list(range(first, first + len(fresh)))
        conn.execute("UPDATE sequences SET value = %s WHERE name = 'events'", (seqs[-1],))
        _insert(conn, fresh, seqs)
    outcomes: list[AppendOutcome] = []
    written: set[int] = set()
    for event, place in zip(events, places, strict=True):
        seq = place if place > 0 else seqs[-1 - place]
        repeated = place > 0 or seq in written
        written.add(seq)
        outcomes.append(
            AppendResult(
                event.session_id, event.client_event_id, seq, observation_id(seq), repeated
            )
        )
    return outcomes


def _insert(conn: psycopg.Connection, events: list[NewEvent], seqs: list[int]) -> None:
    columns = list(
        zip(
            *(
                (
                    seq,
                    e.session_id,
                    e.client_event_id,
                    e.hook_type,
                    e.project,
                    e.cwd,
                    e.agent_id,
                    e.client_timestamp,
                    e.occurred_at,
                    e.received_at,
                    e.payload,
                )
                for seq, e in zip(seqs, events, strict=True)
            ),
            strict=True,
        )
    )
    inserted = conn.execute(_INSERT_EVENTS, [list(c) for c in columns])
    observations = [
        (
            seq,
            e.session_id,
            e.occurred_at,
            e.hook_type,
            e.observation.type,
            without_nul(e.observation.title),
            without_nul(e.observation.narrative),
            _json(e.observation.facts),
            _json(e.observation.files),
            _json(e.observation.concepts),
            e.observation.importance,
            e.received_at,
        )
        for seq, e in zip(seqs, events, strict=True)
    ]
    conn.execute(_INSERT_OBSERVATIONS, [list(c) for c in zip(*observations, strict=True)])
    sessions: dict[str, list] = {}
    for seq, e in zip(seqs, events, strict=True):
        session = sessions.get(e.session_id)
        if session is None:
            sessions[e.session_id] = [
                e.session_id,
                e.project,
                e.cwd,
                e.agent_id,
                e.received_at,
                e.received_at,
                e.occurred_at,
                e.occurred_at,
                e.received_at,
                1,
                1,
                seq,
            ]
        else:
            session[6] = min(session[6], e.occurred_at)
            session[7] = max(session[7], e.occurred_at)
            session[8] = e.received_at
            session[9] += 1
            session[10] += 1
            session[11] = seq
    # In id order, so two transactions touching the same sessions lock them alike.
    rows = [sessions[key] for key in sorted(sessions)]
    conn.execute(_TOUCH_SESSIONS, [*(list(c) for c in zip(*rows, strict=True)), len(events)])
    if len(inserted.fetchall()) != len(events):
        raise LostRace("an event id was stored by another writer meanwhile")


def _stored_ids(
    conn: psycopg.Connection, events: list[NewEvent]
) -> dict[tuple[str, str | None], int]:
    """(session, client event id) → seq, for the events already stored: one probe of the
    unique index per id."""
    wanted = list({(e.session_id, e.client_event_id) for e in events if e.client_event_id})
    if not wanted:
        return {}
    rows = conn.execute(
        "SELECT e.session_id, e.client_event_id, e.seq "
        "FROM unnest(%s::text[], %s::text[]) AS v(session_id, client_event_id) "
        "JOIN events e ON e.session_id = v.session_id AND e.client_event_id = v.client_event_id",
        ([w[0] for w in wanted], [w[1] for w in wanted]),
    )
    return {(session_id, client_id): seq for session_id, client_id, seq in rows}


def without_nul(text: str) -> str:
    """PostgreSQL text cannot hold U+0000: in an observation's text (derived, shown to a
    person) it becomes U+FFFD. The event's payload keeps it, escaped in its JSON."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def _json(values: list[str]) -> str:
    return jsontext.dumps(values) if values else "[]"
