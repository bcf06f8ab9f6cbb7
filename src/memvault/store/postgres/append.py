"""Appending events to the PostgreSQL log: the hot path of ingest, shared by replicas.

A batch is one transaction that first takes the event log's advisory lock, so appends from
every replica commit one after another, in the order of the sequence numbers they drew: a
follower reading by sequence (``log_after``, ``observations_after``) never passes a number
that commits later. Under the lock the lookup of stored ids is authoritative, so an id is
stored once whoever writes it.

The lock is held for as little as the database's own work: everything the client computes
is computed before, and the lock, the one statement that appends the batch (the lookup,
the numbers, the events, their observations, the sessions and the counters, in
data-modifying CTEs) and the commit go in one flush of a pipeline, one round trip, with no
wait on this process in between. Replicas then take turns on the lock as fast as the
database appends, not as fast as each other's interpreters answer. If the batch fails, it
is redone event by event under savepoints, so only the culprit fails. Since appends take
turns on the lock anyway, each store appends from one thread (``Appender``) that writes
whatever callers queued meanwhile in one transaction: a burst of hook events costs one
turn, not one each.
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
from memvault.store.contract import AppendOutcome

# pg_advisory_xact_lock keys: one per log whose numbers followers read in order.
EVENT_LOG_LOCK = 0x6D76_0001
OBSERVATION_CHANGES_LOCK = 0x6D76_0002


# The whole batch in one statement, under the lock taken just before it. Input: one array
# per column, an event per position (``ord``). Output: per position, its sequence number
# and whether it was stored before (by an earlier batch, or earlier in this one).
_APPEND = """
WITH v AS (
    SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
                         %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
                         %s::text[], %s::text[], %s::text[], %s::text[], %s::integer[])
        WITH ORDINALITY AS v(session_id, client_event_id, hook_type, project, cwd, agent_id,
                             client_timestamp, occurred_at, received_at, payload, type, title,
                             narrative, facts, files, concepts, importance, ord)
),
known AS (
    SELECT v.ord, e.seq FROM v
    JOIN events e ON e.session_id = v.session_id AND e.client_event_id = v.client_event_id
),
firsts AS (  -- an id given twice in the batch: its first place is the one stored
    SELECT DISTINCT ON (session_id, client_event_id) session_id, client_event_id, ord
    FROM v WHERE client_event_id IS NOT NULL
    ORDER BY session_id, client_event_id, ord
),
fresh AS (
    SELECT v.*, row_number() OVER (ORDER BY v.ord) AS n FROM v
    WHERE v.ord NOT IN (SELECT ord FROM known)
      AND (v.client_event_id IS NULL OR v.ord IN (SELECT ord FROM firsts))
),
issued AS (
    UPDATE sequences SET value = value + (SELECT count(*) FROM fresh)
    WHERE name = 'events'
    RETURNING value - (SELECT count(*) FROM fresh) AS base
),
numbered AS (
    SELECT f.*, i.base + f.n AS seq FROM fresh f CROSS JOIN issued i
),
stored AS (
    INSERT INTO events (seq, session_id, client_event_id, hook_type, project, cwd, agent_id,
                        client_timestamp, occurred_at, received_at, payload)
    SELECT seq, session_id, client_event_id, hook_type, project, cwd, agent_id,
           client_timestamp, occurred_at, received_at, payload
    FROM numbered
),
observed AS (
    INSERT INTO observations (event_seq, session_id, occurred_at, hook_type, type, title,
                              narrative, facts, files, concepts, importance, derived_by,
                              updated_at)
    SELECT seq, session_id, occurred_at, hook_type, type, title, narrative, facts, files,
           concepts, importance, 'synthetic', received_at
    FROM numbered
),
per_session AS (
    SELECT session_id, min(n) AS first_n, max(n) AS last_n, min(occurred_at) AS first_at,
           max(occurred_at) AS last_at, count(*)::integer AS events
    FROM numbered GROUP BY session_id
),
touched AS (  -- xmax = 0 on a returned row: inserted, not updated, a session new to the log
    INSERT INTO sessions (id, project, cwd, agent_id, created_at, updated_at, first_event_at,
                          last_event_at, last_received_at, event_count, observation_count,
                          last_event_seq)
    SELECT s.session_id, f.project, f.cwd, f.agent_id, f.received_at, f.received_at,
           s.first_at, s.last_at, l.received_at, s.events, s.events, l.seq
    FROM per_session s
    JOIN numbered f ON f.n = s.first_n
    JOIN numbered l ON l.n = s.last_n
    ORDER BY s.session_id
    ON CONFLICT (id) DO UPDATE SET
        first_event_at = least(sessions.first_event_at, excluded.first_event_at),
        last_event_at = greatest(sessions.last_event_at, excluded.last_event_at),
        last_received_at = excluded.last_received_at,
        last_event_seq = excluded.last_event_seq,
        event_count = sessions.event_count + excluded.event_count,
        observation_count = sessions.observation_count + excluded.observation_count,
        updated_at = excluded.updated_at
    RETURNING xmax = 0 AS created
),
counted AS (
    UPDATE counters SET value = value + CASE
        WHEN name = 'sessions' THEN (SELECT count(*) FROM touched WHERE created)
        ELSE (SELECT count(*) FROM numbered) END
    WHERE name IN ('events', 'observations', 'sessions')
)
SELECT v.ord, coalesce(k.seq, mine.seq, first.seq) AS seq, mine.seq IS NULL AS repeated
FROM v
LEFT JOIN known k ON k.ord = v.ord
LEFT JOIN numbered mine ON mine.ord = v.ord
LEFT JOIN firsts fi ON fi.session_id = v.session_id AND fi.client_event_id = v.client_event_id
LEFT JOIN numbered first ON first.ord = fi.ord
ORDER BY v.ord
"""

# Errors that are the connection's or the transaction's, not one event's: the whole
# transaction fails (and may be tried again), never a single event.
_TRANSACTION_ERRORS = (
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
    """Append a batch in one transaction, committed here; if anything fails, redo it event
    by event so only the culprit fails."""
    if not events:
        return []
    columns = _columns(events)  # before the lock: nothing of ours runs while it is held
    try:
        with conn.pipeline():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (EVENT_LOG_LOCK,))
            answer = conn.execute(_APPEND, columns)
            conn.commit()  # sent in the same flush: the lock goes with the commit
        return _outcomes(events, answer.fetchall())
    except _TRANSACTION_ERRORS:
        raise
    except Exception:
        if conn.broken:
            raise
        conn.rollback()
    outcomes: list[AppendOutcome] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (EVENT_LOG_LOCK,))
        for event in events:
            try:
                with conn.transaction():
                    rows = conn.execute(_APPEND, _columns([event])).fetchall()
                outcomes.extend(_outcomes([event], rows))
            except _TRANSACTION_ERRORS:
                raise
            except Exception as exc:  # one event that cannot be stored fails alone
                if conn.broken:
                    raise
                outcomes.append(AppendFailure(event.session_id, event.client_event_id, str(exc)))
    return outcomes


def _columns(events: list[NewEvent]) -> list[list[Any]]:
    """The batch as one array per column of ``_APPEND``'s input."""
    rows = [
        (
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
            e.observation.type,
            without_nul(e.observation.title),
            without_nul(e.observation.narrative),
            _json(e.observation.facts),
            _json(e.observation.files),
            _json(e.observation.concepts),
            e.observation.importance,
        )
        for e in events
    ]
    return [list(column) for column in zip(*rows, strict=True)]


def _outcomes(events: list[NewEvent], rows: list[tuple[int, int, bool]]) -> list[AppendOutcome]:
    if len(rows) != len(events):
        raise RuntimeError(f"the append answered {len(rows)} rows for {len(events)} events")
    return [
        AppendResult(event.session_id, event.client_event_id, seq, observation_id(seq), repeated)
        for event, (_, seq, repeated) in zip(events, rows, strict=True)
    ]


def without_nul(text: str) -> str:
    """PostgreSQL text cannot hold U+0000: in an observation's text (derived, shown to a
    person) it becomes U+FFFD. The event's payload keeps it, escaped in its JSON."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def _json(values: list[str]) -> str:
    return jsontext.dumps(values) if values else "[]"
