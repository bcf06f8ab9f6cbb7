-- What an LLM answered for a run, kept until the run's watermark moves, so a run repeated
-- after a crash writes the same output instead of asking again (and getting other words).
CREATE TABLE pipeline_results (
    kind       TEXT NOT NULL,
    session_id TEXT NOT NULL,
    through    INTEGER NOT NULL,
    result     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (kind, session_id, through)
) WITHOUT ROWID;

-- Events whose fragment a person or agent forgot: the pipeline does not write it again.
CREATE TABLE forgotten_events (
    event_id     TEXT PRIMARY KEY,
    forgotten_at TEXT NOT NULL
) WITHOUT ROWID;

-- Sessions wait for the compressor only for events past both its watermark and the
-- summary's: what is summarized already is never sent.
DROP INDEX sessions_uncompressed;
CREATE INDEX sessions_uncompressed
    ON sessions (last_received_at)
    WHERE last_event_seq > max(coalesce(compressed_seq, 0), coalesce(summarized_seq, 0));
