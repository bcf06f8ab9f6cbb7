-- The pipeline's session summaries, one per session; `sessions` holds its watermark.

CREATE TABLE session_summaries (
    session_id TEXT PRIMARY KEY,
    summary    TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);

-- Sessions with observations past their summary watermark are found without a scan.
CREATE INDEX sessions_unsummarized
    ON sessions (last_received_at)
    WHERE observation_count > summarized_observation_count;
