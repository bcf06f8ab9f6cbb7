-- Sessions become retrieval units of their own (kind 'session'): SQLite cannot change a
-- CHECK constraint in place, so the documents table is made again with the new kind, its
-- rows, ids and indexes kept. The lexical index (documents_fts) is keyed by the same ids
-- and is not touched; the id sequence carries on where it was, so no id is ever reused.
CREATE TABLE documents_next (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT NOT NULL CHECK (kind IN ('fragment', 'summary', 'session', 'observation')),
    key          TEXT NOT NULL,
    project      TEXT,
    session_id   TEXT,
    title        TEXT NOT NULL,
    summary      TEXT NOT NULL,
    body         TEXT NOT NULL,
    importance   REAL NOT NULL,
    updated_at   TEXT NOT NULL,
    path         TEXT,
    event_ids    TEXT NOT NULL DEFAULT '[]',
    archived     INTEGER NOT NULL DEFAULT 0,
    meta         TEXT NOT NULL DEFAULT '{}',
    content_hash TEXT NOT NULL,
    mtime        REAL,
    revision     INTEGER NOT NULL,
    embed_text   TEXT NOT NULL
);

INSERT INTO documents_next SELECT * FROM documents;

INSERT INTO sqlite_sequence (name, seq)
SELECT 'documents_next', 0
WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'documents_next');

UPDATE sqlite_sequence
SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'documents'), 0))
WHERE name = 'documents_next';

DROP TABLE documents;

ALTER TABLE documents_next RENAME TO documents;

CREATE UNIQUE INDEX documents_key ON documents (kind, key);
CREATE INDEX documents_revision ON documents (revision);
CREATE INDEX documents_project ON documents (project, kind, archived);
