-- The raw event log, derived observations, sessions with watermark cursors, and the job queue.

-- Sequence numbers are issued from `sequences` (bumped once per batch), so they only grow
-- and are never reused, even after deletions, without AUTOINCREMENT's per-row cost.
CREATE TABLE sequences (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO sequences (name, value) VALUES ('events', 0);

CREATE TABLE events (
    seq              INTEGER PRIMARY KEY,
    session_id       TEXT NOT NULL,
    client_event_id  TEXT,
    hook_type        TEXT NOT NULL,
    project          TEXT NOT NULL,
    cwd              TEXT NOT NULL,
    agent_id         TEXT,
    client_timestamp TEXT NOT NULL,
    occurred_at      TEXT NOT NULL,
    received_at      TEXT NOT NULL,
    payload          TEXT NOT NULL
);

-- Idempotency is a database constraint, so it holds across restarts and processes.
-- NULL client ids are distinct, so events without one are never deduplicated.
CREATE UNIQUE INDEX events_client_id ON events (session_id, client_event_id);
CREATE INDEX events_session_time ON events (session_id, occurred_at, seq);

CREATE TRIGGER events_are_immutable BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are immutable');
END;

-- One observation per event, keyed by the event's sequence number (public id obs_<seq>).
-- It is listed through events_session_time, so it needs no index of its own.
CREATE TABLE observations (
    event_seq   INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    hook_type   TEXT NOT NULL,
    type        TEXT NOT NULL,
    title       TEXT NOT NULL,
    narrative   TEXT NOT NULL,
    facts       TEXT NOT NULL DEFAULT '[]',
    files       TEXT NOT NULL DEFAULT '[]',
    concepts    TEXT NOT NULL DEFAULT '[]',
    importance  INTEGER NOT NULL,
    derived_by  TEXT NOT NULL DEFAULT 'synthetic',
    updated_at  TEXT NOT NULL
);

CREATE TABLE sessions (
    id                           TEXT PRIMARY KEY,
    project                      TEXT NOT NULL,
    cwd                          TEXT NOT NULL,
    agent_id                     TEXT,
    title                        TEXT,
    board_session_id             TEXT UNIQUE,
    created_at                   TEXT NOT NULL,
    updated_at                   TEXT NOT NULL,
    first_event_at               TEXT,
    last_event_at                TEXT,
    last_received_at             TEXT,
    last_event_seq               INTEGER,
    event_count                  INTEGER NOT NULL DEFAULT 0,
    observation_count            INTEGER NOT NULL DEFAULT 0,
    summarized_at                TEXT,
    summarized_seq               INTEGER,
    extracted_at                 TEXT,
    extracted_seq                INTEGER,
    reflected_at                 TEXT,
    reflected_seq                INTEGER,
    graph_extracted_at           TEXT,
    graph_extracted_seq          INTEGER,
    summary_revision             INTEGER NOT NULL DEFAULT 0,
    summarized_observation_count INTEGER NOT NULL DEFAULT 0,
    last_sweep_attempt_at        TEXT
);

CREATE INDEX sessions_recent ON sessions (last_received_at DESC, last_event_seq DESC);
CREATE INDEX sessions_agent_recent
    ON sessions (agent_id, last_received_at DESC, last_event_seq DESC);

CREATE TABLE jobs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT NOT NULL,
    dedupe_key    TEXT,
    payload       TEXT NOT NULL DEFAULT '{}',
    state         TEXT NOT NULL DEFAULT 'pending'
                  CHECK (state IN ('pending', 'running', 'done', 'failed')),
    run_after     TEXT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    claimed_by    TEXT,
    claimed_until TEXT,
    error         TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

CREATE UNIQUE INDEX jobs_live_dedupe ON jobs (kind, dedupe_key)
    WHERE state IN ('pending', 'running');
CREATE INDEX jobs_ready ON jobs (state, run_after);
