-- LLM compression of observations, and what the pipeline itself wrote into the vault.

-- The compression watermark: every event up to it has been through the compressor.
ALTER TABLE sessions ADD COLUMN compressed_at TEXT;
ALTER TABLE sessions ADD COLUMN compressed_seq INTEGER;

-- Sessions with events the compressor has not seen are found without a scan.
CREATE INDEX sessions_uncompressed
    ON sessions (last_received_at)
    WHERE last_event_seq > coalesce(compressed_seq, 0);

-- Observations rewritten in place (an LLM upgrade, a rebuild), in order: the search index
-- follows this log by cursor to re-index them.
CREATE TABLE observation_changes (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    event_seq INTEGER NOT NULL
);

-- Fragments the pipeline wrote, with the content it left: a rebuild replaces a file only
-- while it still holds exactly that content (an edited file is a person's now).
CREATE TABLE pipeline_fragments (
    path       TEXT PRIMARY KEY,
    sha256     TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
