-- The core of the PostgreSQL store: the raw event log and its observations, sessions with
-- their watermarks, the board mirror, the job queue, counters and the pipeline's results.
-- The search index and the graph have migrations of their own.
--
-- Times are ISO-8601 text (domain.iso), as in SQLite, and every text column compares
-- bytewise (COLLATE "C"), so times and ids sort the same on both engines whatever the
-- database's locale.

-- Sequence numbers are issued from `sequences` by the transaction that uses them, under
-- the event log's advisory lock (see store/postgres_append.py): they only grow, are never
-- reused, and become visible in the order they were issued.
CREATE TABLE sequences (
    name  TEXT COLLATE "C" PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO sequences (name, value) VALUES ('events', 0);

CREATE TABLE events (
    seq              BIGINT PRIMARY KEY,
    session_id       TEXT COLLATE "C" NOT NULL,
    client_event_id  TEXT COLLATE "C",
    hook_type        TEXT COLLATE "C" NOT NULL,
    project          TEXT COLLATE "C" NOT NULL,
    cwd              TEXT COLLATE "C" NOT NULL,
    agent_id         TEXT COLLATE "C",
    client_timestamp TEXT COLLATE "C" NOT NULL,
    occurred_at      TEXT COLLATE "C" NOT NULL,
    received_at      TEXT COLLATE "C" NOT NULL,
    payload          TEXT NOT NULL
);

-- Idempotency is a database constraint, so it holds across replicas and restarts. NULL
-- client ids are distinct, so events without one are never deduplicated.
CREATE UNIQUE INDEX events_client_id ON events (session_id, client_event_id);
CREATE INDEX events_session_time ON events (session_id, occurred_at, seq);
CREATE INDEX events_session_seq ON events (session_id, seq);

CREATE FUNCTION events_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are immutable';
END;
$$;

CREATE TRIGGER events_are_immutable BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION events_are_immutable();

-- One observation per event, keyed by the event's sequence number (public id obs_<seq>).
CREATE TABLE observations (
    event_seq   BIGINT PRIMARY KEY,
    session_id  TEXT COLLATE "C" NOT NULL,
    occurred_at TEXT COLLATE "C" NOT NULL,
    hook_type   TEXT COLLATE "C" NOT NULL,
    type        TEXT COLLATE "C" NOT NULL,
    title       TEXT NOT NULL,
    narrative   TEXT NOT NULL,
    facts       TEXT NOT NULL DEFAULT '[]',
    files       TEXT NOT NULL DEFAULT '[]',
    concepts    TEXT NOT NULL DEFAULT '[]',
    importance  INTEGER NOT NULL,
    derived_by  TEXT COLLATE "C" NOT NULL DEFAULT 'synthetic',
    updated_at  TEXT COLLATE "C" NOT NULL
);

CREATE TABLE sessions (
    id                           TEXT COLLATE "C" PRIMARY KEY,
    project                      TEXT COLLATE "C" NOT NULL,
    cwd                          TEXT COLLATE "C" NOT NULL,
    agent_id                     TEXT COLLATE "C",
    title                        TEXT,
    board_session_id             TEXT COLLATE "C" UNIQUE,
    created_at                   TEXT COLLATE "C" NOT NULL,
    updated_at                   TEXT COLLATE "C" NOT NULL,
    first_event_at               TEXT COLLATE "C",
    last_event_at                TEXT COLLATE "C",
    last_received_at             TEXT COLLATE "C",
    last_event_seq               BIGINT,
    event_count                  INTEGER NOT NULL DEFAULT 0,
    observation_count            INTEGER NOT NULL DEFAULT 0,
    summarized_at                TEXT COLLATE "C",
    summarized_seq               BIGINT,
    extracted_at                 TEXT COLLATE "C",
    extracted_seq                BIGINT,
    reflected_at                 TEXT COLLATE "C",
    reflected_seq                BIGINT,
    graph_extracted_at           TEXT COLLATE "C",
    graph_extracted_seq          BIGINT,
    summary_revision             INTEGER NOT NULL DEFAULT 0,
    summarized_observation_count INTEGER NOT NULL DEFAULT 0,
    last_sweep_attempt_at        TEXT COLLATE "C",
    compressed_at                TEXT COLLATE "C",
    compressed_seq               BIGINT
);

-- NULLS LAST: SQLite holds NULL smallest, so a descending order ends with it there; here
-- it must be said, for the sessions that never had an event to sort the same.
CREATE INDEX sessions_recent
    ON sessions (last_received_at DESC NULLS LAST, last_event_seq DESC NULLS LAST);
CREATE INDEX sessions_agent_recent
    ON sessions (agent_id, last_received_at DESC NULLS LAST, last_event_seq DESC NULLS LAST);

-- Sessions with observations past their summary watermark are found without a scan.
CREATE INDEX sessions_unsummarized
    ON sessions (last_received_at)
    WHERE observation_count > summarized_observation_count;

-- Sessions wait for the compressor only for events past both its watermark and the
-- summary's: what is summarized already is never sent.
CREATE INDEX sessions_uncompressed
    ON sessions (last_received_at)
    WHERE last_event_seq > greatest(coalesce(compressed_seq, 0), coalesce(summarized_seq, 0));

-- Row counts for health, kept in step by the transactions that add rows.
CREATE TABLE counters (
    name  TEXT COLLATE "C" PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO counters (name, value) VALUES ('events', 0), ('observations', 0), ('sessions', 0);

-- The job queue. An id is never reused; claims take the row with FOR UPDATE SKIP LOCKED.
CREATE TABLE jobs (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind          TEXT COLLATE "C" NOT NULL,
    dedupe_key    TEXT COLLATE "C",
    payload       TEXT NOT NULL DEFAULT '{}',
    state         TEXT COLLATE "C" NOT NULL DEFAULT 'pending'
                  CHECK (state IN ('pending', 'running', 'done', 'failed')),
    run_after     TEXT COLLATE "C" NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    claimed_by    TEXT COLLATE "C",
    claimed_until TEXT COLLATE "C",
    error         TEXT,
    created_at    TEXT COLLATE "C" NOT NULL,
    updated_at    TEXT COLLATE "C" NOT NULL
);

-- A job's dedupe key holds only while it is pending: a request that comes while the same
-- job runs queues one more run, so what arrived meanwhile is not left out.
CREATE UNIQUE INDEX jobs_pending_dedupe ON jobs (kind, dedupe_key) WHERE state = 'pending';
CREATE INDEX jobs_ready ON jobs (state, run_after, id);
CREATE INDEX jobs_leased ON jobs (claimed_until, id) WHERE state = 'running';
CREATE INDEX jobs_finished ON jobs (state, updated_at) WHERE state IN ('done', 'failed');

-- A mirror of the session board (memory/index.md); the file is the truth.
CREATE TABLE board_rows (
    session_id    TEXT COLLATE "C" PRIMARY KEY,
    agent_name    TEXT NOT NULL,
    topic         TEXT NOT NULL,
    summary       TEXT NOT NULL,
    keywords      TEXT NOT NULL,
    status        TEXT COLLATE "C" NOT NULL,
    referenced_by TEXT NOT NULL DEFAULT '[]',
    started_at    TEXT COLLATE "C" NOT NULL,
    updated_at    TEXT COLLATE "C" NOT NULL,
    position      INTEGER NOT NULL
);

CREATE INDEX board_rows_status ON board_rows (status, position);

-- The pipeline's session summaries, one per session; `sessions` holds its watermark.
CREATE TABLE session_summaries (
    session_id TEXT COLLATE "C" PRIMARY KEY,
    summary    TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL
);

-- Observations rewritten in place (an LLM upgrade, a rebuild), in order: the search index
-- follows this log by id. Ids are issued under their own advisory lock, so they become
-- visible in order too (see store/postgres_pipeline.py).
CREATE TABLE observation_changes (
    id        BIGINT PRIMARY KEY,
    event_seq BIGINT NOT NULL
);
INSERT INTO sequences (name, value) VALUES ('observation_changes', 0);

-- Fragments the pipeline wrote, with the content it left.
CREATE TABLE pipeline_fragments (
    path       TEXT COLLATE "C" PRIMARY KEY,
    sha256     TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL
);

-- What an LLM answered for a run, kept until the run's watermark moves.
CREATE TABLE pipeline_results (
    kind       TEXT COLLATE "C" NOT NULL,
    session_id TEXT COLLATE "C" NOT NULL,
    through    BIGINT NOT NULL,
    result     TEXT NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (kind, session_id, through)
);

-- Events whose fragment a person or agent forgot: the pipeline does not write it again.
CREATE TABLE forgotten_events (
    event_id     TEXT COLLATE "C" PRIMARY KEY,
    forgotten_at TEXT COLLATE "C" NOT NULL
);

-- What each session was given in its memory blocks.
CREATE TABLE injections (
    session_id  TEXT COLLATE "C" NOT NULL,
    kind        TEXT COLLATE "C" NOT NULL,
    item_id     TEXT COLLATE "C" NOT NULL,
    injected_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (session_id, kind, item_id)
);
