-- A session's document is weighed among sessions (SQLite's sessions_fts): the lexical
-- index's session part has postings and totals of its own, so BM25 reads its document
-- count, lengths and term frequencies from sessions alone. The session documents'
-- postings move over as they are; `documents` and `tokens` count the other part.
-- The same columns, checks, key and indexes as document_terms.
CREATE TABLE session_terms (LIKE document_terms INCLUDING ALL);

ALTER TABLE document_totals
    ADD COLUMN session_documents BIGINT NOT NULL DEFAULT 0,  -- the session part's N
    ADD COLUMN session_tokens    BIGINT NOT NULL DEFAULT 0;  -- and its tokens

INSERT INTO session_terms (term, document_id, field, frequency, positions)
SELECT t.term, t.document_id, t.field, t.frequency, t.positions
FROM document_terms t JOIN documents d ON d.id = t.document_id
WHERE d.kind = 'session';

DELETE FROM document_terms t USING documents d
WHERE d.id = t.document_id AND d.kind = 'session';

UPDATE document_totals SET
    session_documents = s.n,
    session_tokens = s.length,
    documents = document_totals.documents - s.n,
    tokens = document_totals.tokens - s.length
FROM (SELECT count(*) AS n, coalesce(sum(length), 0) AS length
      FROM documents WHERE kind = 'session') s;

-- Their documents were made without the sessions' replies: the indexer makes every
-- session's document again from its events, in the background, from the log's start.
DELETE FROM cursors WHERE name = 'index:sessions';
