-- The search index: one document per fragment, session summary and observation.

-- `revision` is issued from `sequences` whenever a document's content changes, so followers
-- (the embedding worker) resume from a cursor instead of scanning for work.
INSERT INTO sequences (name, value) VALUES ('documents', 0);

-- AUTOINCREMENT: an id is never reused, so nothing keyed by a deleted document's id (a
-- vector held in memory, a cached result) can be mistaken for a new one.
CREATE TABLE documents (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT NOT NULL CHECK (kind IN ('fragment', 'summary', 'observation')),
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

CREATE UNIQUE INDEX documents_key ON documents (kind, key);
CREATE INDEX documents_revision ON documents (revision);
CREATE INDEX documents_project ON documents (project, kind, archived);

-- Analyzed text (see search/analyzer.py): tokens separated by spaces, so the same analyzer
-- decides what matches at index and at query time; FTS5 only stores positions and scores.
-- Columns: the document's title and body; context (neighbouring events, tags, keywords);
-- its date in words ("8 May 2023 May 2023"), so a question naming a month finds its turns;
-- and scope, tokens for kind, project and live/archived that filters are matched against
-- (weight 0: they never change a score), so a filtered search needs no join.
CREATE VIRTUAL TABLE documents_fts USING fts5(
    title, body, context, dates, scope,
    tokenize = 'unicode61 remove_diacritics 0'
);

-- Access is kept apart from the documents so re-indexing a file never resets it.
CREATE TABLE document_access (
    kind          TEXT NOT NULL,
    key           TEXT NOT NULL,
    count         INTEGER NOT NULL DEFAULT 0,
    last_accessed TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);

CREATE TABLE document_vectors (
    document_id INTEGER PRIMARY KEY,
    model       TEXT NOT NULL,
    vector      BLOB NOT NULL
);

-- Where each follower of a log has got to (observations indexed, documents embedded).
CREATE TABLE cursors (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
