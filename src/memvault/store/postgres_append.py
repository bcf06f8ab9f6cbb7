"""Appending events to the PostgreSQL log: the hot path of ingest, shared by replicas.

A batch is one transaction that first takes the event log's advisory lock, so appends from
every replica commit one after another, in the order of the sequence numbers they drew: a
follower reading by sequence (``log_after``, ``observations_after``) never passes a number
that commits later. Under the lock the lookup of stored ids is authoritative; the insert
still says ``ON CONFLICT DO NOTHING`` against the unique client id, and a row it skipped
sends the whole transaction round again, so an id is stored once whoever writes it.

The batch is written in a few statements (arrays unnested into each table); if any of it
fails, it is redone event by event under savepoints, so only the culprit fails.
"""

from __future__ import annotations

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

# xmax = 0 on the returned row: it was inserted, not updated (a session new to the log).
_TOUCH_SESSIONS = """
INSERT INTO sessions (id, project, cwd, agent_id, created_at, updated_at, first_event_at,
                      last_event_at, last_received_at, event_count, observation_count,
                      last_event_seq)
SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
                     %s::text[], %s::text[], %s::text[], %s::integer[], %s::integer[],
                     %s::bigint[])
ON CONFLICT (id) DO UPDATE SET
    first_event_at = least(sessions.first_event_at, excluded.first_event_at),
    last_event_at = greatest(sessions.last_event_at, excluded.last_event_at),
    last_received_at = excluded.last_received_at,
    last_event_seq = excluded.last_event_seq,
    event_count = sessions.event_count + excluded.event_count,
    observation_count = sessions.observation_count + excluded.observation_count,
    updated_at = excluded.updated_at
RETURNING xmax = 0
"""

_COUNT = """
UPDATE counters SET value = value + CASE name
    WHEN 'events' THEN %(events)s WHEN 'observations' THEN %(events)s
    WHEN 'sessions' THEN %(sessions)s END
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


def append(conn: psycopg.Connection, events: list[NewEvent]) -> list[AppendOutcome]:
    """Append a batch in one transaction; if anything fails, redo it event by event so only
    the culprit fails."""
    if not events:
        return []
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
        last = conn.execute(
            "UPDATE sequences SET value = value + %s WHERE name = 'events' RETURNING value",
            (len(fresh),),
        ).fetchone()[0]
        seqs = list(range(last - len(fresh) + 1, last + 1))
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
    inserted = conn.execute(_INSERT_EVENTS, [list(c) for c in columns]).fetchall()
    if len(inserted) != len(events):
        raise LostRace("an event id was stored by another writer meanwhile")
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
    touched = conn.execute(_TOUCH_SESSIONS, [list(c) for c in zip(*rows, strict=True)])
    new_sessions = sum(1 for (inserted_row,) in touched.fetchall() if inserted_row)
    conn.execute(_COUNT, {"events": len(events), "sessions": new_sessions})


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
