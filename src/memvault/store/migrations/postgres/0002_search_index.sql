-- The search index: one document per fragment, session summary and observation, its
-- analyzed terms in a postings table, vectors, read counts and followers' cursors.
--
-- Ranking is FTS5's bm25() as the SQLite engine asks it (see store/postgres_documents.py):
-- the postings hold each term's positions per field, so phrases and prefixes match as FTS5
-- matches them, and `length` with `document_totals` give BM25 its document lengths.

-- Ids, revisions and the index's totals are drawn by the transaction that writes documents,
-- under the index's advisory lock, so they become visible in the order they were drawn: a
-- follower reading by revision (the embedding worker) never passes one that commits later.
-- An id is never reused, as SQLite's AUTOINCREMENT never reuses a committed one.
CREATE TABLE document_totals (
    only_row      BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    documents     BIGINT NOT NULL,  -- rows of the index (BM25's N)
    tokens        BIGINT NOT NULL,  -- tokens of every document, scope included
    last_id       BIGINT NOT NULL,
    last_revision BIGINT NOT NULL
);
INSERT INTO document_totals (documents, tokens, last_id, last_revision) VALUES (0, 0, 0, 0);

CREATE TABLE documents (
    id            BIGINT PRIMARY KEY,
    kind          TEXT COLLATE "C" NOT NULL CHECK (kind IN ('fragment', 'summary', 'observation')),
    key           TEXT COLLATE "C" NOT NULL,
    project       TEXT COLLATE "C",
    session_id    TEXT COLLATE "C",
    title         TEXT NOT NULL,
    summary       TEXT NOT NULL,
    body          TEXT NOT NULL,
    importance    DOUBLE PRECISION NOT NULL,
    updated_at    TEXT COLLATE "C" NOT NULL,
    path          TEXT COLLATE "C",
    event_ids     TEXT NOT NULL DEFAULT '[]',
    archived      BOOLEAN NOT NULL DEFAULT false,
    meta          TEXT NOT NULL DEFAULT '{}',
    content_hash  TEXT COLLATE "C" NOT NULL,
    mtime         DOUBLE PRECISION,
    revision      BIGINT NOT NULL,
    embed_text    TEXT NOT NULL,
    -- The filter the index holds (SQLite's scope column): the project as last written,
    -- which a write that keeps the content refreshes as it refreshes `archived`.
    scope_project TEXT COLLATE "C",
    -- Tokens in title, body, context, dates and the scope tokens (kind, live or archived,
    -- project): the document length FTS5's bm25() uses.
    length        INTEGER NOT NULL
);

CREATE UNIQUE INDEX documents_key ON documents (kind, key);
CREATE INDEX documents_revision ON documents (revision);
CREATE INDEX documents_project ON documents (project, kind, archived);
CREATE INDEX documents_updated ON documents (kind, updated_at DESC, id DESC);

-- One row per (term, document, field): field 0 title, 1 body, 2 context, 3 dates. Terms are
-- the tokens SQLite's unicode61 tokenizer makes of the analyzed text, positions their
-- offsets within the field. Bytewise order, so a prefix is a range of the primary key, and
-- a term's documents and frequencies are read from the index alone, in document order. No
-- foreign key: a document's writer deletes its postings itself (a check per posting would
-- cost more than writing it).
CREATE TABLE document_terms (
    term        TEXT COLLATE "C" NOT NULL,
    document_id BIGINT NOT NULL,
    field       SMALLINT NOT NULL CHECK (field BETWEEN 0 AND 3),
    frequency   INTEGER NOT NULL,
    positions   INTEGER[] NOT NULL,
    PRIMARY KEY (term, document_id, field) INCLUDE (frequency)
);

CREATE INDEX document_terms_document ON document_terms (document_id);

-- Access is kept apart from the documents so re-indexing a file never resets it.
CREATE TABLE document_access (
    kind          TEXT COLLATE "C" NOT NULL,
    key           TEXT COLLATE "C" NOT NULL,
    count         INTEGER NOT NULL DEFAULT 0,
    last_accessed TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (kind, key)
);

-- The same bytes the SQLite engine stores. Without pgvector the in-process index reads
-- them through vectors(model), on every replica.
CREATE TABLE document_vectors (
    document_id BIGINT PRIMARY KEY,
    model       TEXT COLLATE "C" NOT NULL,
    vector      BYTEA NOT NULL
);

CREATE INDEX document_vectors_model ON document_vectors (model);

-- Where each follower of a log has got to (observations indexed, documents embedded).
CREATE TABLE cursors (
    name  TEXT COLLATE "C" PRIMARY KEY,
    value BIGINT NOT NULL
);
