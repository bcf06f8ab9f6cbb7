-- A session's document is weighed among sessions: the lexical index's session part is an
-- FTS5 table of its own (the same columns and tokenizer as documents_fts), so BM25 reads
-- its document count, lengths and term frequencies from sessions alone. The session
-- documents move over with their ids; their terms are kept as they were analyzed.
CREATE VIRTUAL TABLE sessions_fts USING fts5(
    title, body, context, dates, scope,
    tokenize = 'unicode61 remove_diacritics 0'
);

INSERT INTO sessions_fts (rowid, title, body, context, dates, scope)
SELECT rowid, title, body, context, dates, scope FROM documents_fts
WHERE rowid IN (SELECT id FROM documents WHERE kind = 'session');

DELETE FROM documents_fts WHERE rowid IN (SELECT id FROM documents WHERE kind = 'session');

-- Their documents were made without the sessions' replies: the indexer makes every
-- session's document again from its events, in the background, from the log's start.
DELETE FROM cursors WHERE name = 'index:sessions';
