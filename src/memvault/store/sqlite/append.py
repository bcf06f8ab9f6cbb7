"""Appending events to the SQLite log: the hot path of ingest.

A batch is appended in a few statements: one indexed lookup for ids already stored, one
sequence bump, one insert per table for all rows, one upsert per session touched. If any
of it fails, the batch is redone event by event under savepoints, so only the culprit fails.
"""

from __future__ import annotations

import sqlite3

from memvault import jsontext
from memvault.domain import AppendFailure, AppendResult, NewEvent, observation_id
from memvault.store.contract import AppendOutcome

_INSERT_EVENT = """
INSERT INTO events (seq, session_id, client_event_id, hook_type, project, cwd, agent_id,
                    client_timestamp, occurred_at, received_at, payload)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

_NEXT_SEQ = "SELECT value + 1 FROM sequences WHERE name = 'events'"
_ISSUED_SEQ = "UPDATE sequences SET value = ? WHERE name = 'events'"

_INSERT_OBSERVATION = """
INSERT INTO observations (event_seq, session_id, occurred_at, hook_type, type, title,
                          narrative, facts, files, concepts, importance, derived_by, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'synthetic', ?)
"""

_TOUCH_SESSION = """
INSERT INTO sessions (id, project, cwd, agent_id, created_at, updated_at, first_event_at,
                      last_event_at, last_received_at, event_count, observation_count,
                      last_event_seq)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    first_event_at = min(coalesce(sessions.first_event_at, excluded.first_event_at),
                         excluded.first_event_at),
    last_event_at = max(coalesce(sessions.last_event_at, ''), excluded.last_event_at),
    last_received_at = excluded.last_received_at,
    last_event_seq = excluded.last_event_seq,
    event_count = sessions.event_count + excluded.event_count,
    observation_count = sessions.observation_count + excluded.observation_count,
    updated_at = excluded.updated_at
"""


def append_requests(
    conn: sqlite3.Connection, requests: list[list[NewEvent]]
) -> list[list[AppendOutcome]]:
    """Append the events of several callers at once; each gets its own outcomes back."""
    outcomes = _append(conn, [event for events in requests for event in events])
    split, start = [], 0
    for events in requests:
        split.append(outcomes[start : start + len(events)])
        start += len(events)
    return split


def _append(conn: sqlite3.Connection, events: list[NewEvent]) -> list[AppendOutcome]:
    """Append a batch in a few statements; if anything fails, redo it event by event so
    only the culprit fails."""
    if not events:
        return []
    conn.execute("SAVEPOINT append_batch")
    try:
        outcomes: list[AppendOutcome] = _append_together(conn, events)
    except Exception:
        conn.execute("ROLLBACK TO append_batch")
        outcomes = []
        for event in events:
            conn.execute("SAVEPOINT append_one")
            try:
                outcomes.extend(_append_together(conn, [event]))
            except Exception as exc:  # one event that cannot be stored fails alone
                conn.execute("ROLLBACK TO append_one")
                outcomes.append(AppendFailure(event.session_id, event.client_event_id, str(exc)))
            conn.execute("RELEASE append_one")
    conn.execute("RELEASE append_batch")
    return outcomes


def _append_together(conn: sqlite3.Connection, events: list[NewEvent]) -> list[AppendOutcome]:
    # The writer holds the database's write lock (BEGIN IMMEDIATE), so what is stored
    # cannot change between this lookup and the inserts, even from another process.
    known = _stored_ids(conn, events)
    seq = conn.execute(_NEXT_SEQ).fetchone()[0]
    outcomes: list[AppendOutcome] = []
    event_rows, observation_rows = [], []
    sessions: dict[str, list] = {}
    for event in events:
        key = (event.session_id, event.client_event_id)
        if event.client_event_id is not None and key in known:
            first = known[key]
            outcomes.append(
                AppendResult(
                    event.session_id,
                    event.client_event_id,
                    first,
                    observation_id(first),
                    deduplicated=True,
                )
            )
            continue
        obs = event.observation
        event_rows.append(
            (
                seq,
                event.session_id,
                event.client_event_id,
                event.hook_type,
                event.project,
                event.cwd,
                event.agent_id,
                event.client_timestamp,
                event.occurred_at,
                event.received_at,
                event.payload,
            )
        )
        observation_rows.append(
            (
                seq,
                event.session_id,
                event.occurred_at,
                event.hook_type,
                obs.type,
                obs.title,
                obs.narrative,
                _json(obs.facts),
                _json(obs.files),
                _json(obs.concepts),
                obs.importance,
                event.received_at,
            )
        )
        session = sessions.get(event.session_id)
        if session is None:
            sessions[event.session_id] = [
                event.session_id,
                event.project,
                event.cwd,
                event.agent_id,
                event.received_at,
                event.received_at,
                event.occurred_at,
                event.occurred_at,
                event.received_at,
                1,
                1,
                seq,
            ]
        else:
            session[6] = min(session[6], event.occurred_at)
            session[7] = max(session[7], event.occurred_at)
            session[8] = event.received_at
            session[9] += 1
            session[10] += 1
            session[11] = seq
        if event.client_event_id is not None:
            known[key] = seq
        outcomes.append(
            AppendResult(event.session_id, event.client_event_id, seq, observation_id(seq), False)
        )
        seq += 1
    conn.execute(_ISSUED_SEQ, (seq - 1,))
    new_sessions = _new_session_count(conn, list(sessions))
    conn.executemany(
        "UPDATE counters SET value = value + ? WHERE name = ?",
        [
            (len(event_rows), "events"),
            (len(event_rows), "observations"),
            (new_sessions, "sessions"),
        ],
    )
    conn.executemany(_INSERT_EVENT, event_rows)
    conn.executemany(_INSERT_OBSERVATION, observation_rows)
    conn.executemany(_TOUCH_SESSION, list(sessions.values()))
    return outcomes


def _new_session_count(conn: sqlite3.Connection, session_ids: list[str]) -> int:
    """How many of these sessions do not exist yet (counted before they are created)."""
    known = 0
    for start in range(0, len(session_ids), 500):
        chunk = session_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        known += conn.execute(
            f"SELECT count(*) FROM sessions WHERE id IN ({marks})", chunk
        ).fetchone()[0]
    return len(session_ids) - known


def _stored_ids(
    conn: sqlite3.Connection, events: list[NewEvent]
) -> dict[tuple[str, str | None], int]:
    """(session, client event id) → seq, for the events already stored.

    One query per 400 ids: a VALUES list joined to the unique index, so a batch mixing
    many sessions still costs a single probe of the index per id.
    """
    wanted = list({(e.session_id, e.client_event_id) for e in events if e.client_event_id})
    found: dict[tuple[str, str | None], int] = {}
    for start in range(0, len(wanted), 400):
        chunk = wanted[start : start + 400]
        values = ",".join("(?,?)" for _ in chunk)
        rows = conn.execute(
            f"SELECT e.session_id, e.client_event_id, e.seq FROM (VALUES {values}) AS v "
            "JOIN events e ON e.session_id = v.column1 AND e.client_event_id = v.column2",
            [part for pair in chunk for part in pair],
        )
        for session_id, client_id, seq in rows:
            found[(session_id, client_id)] = seq
    return found


def _json(values: list[str]) -> str:
    return jsontext.dumps(values) if values else "[]"
