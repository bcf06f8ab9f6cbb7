-- A session's bookkeeping (a session starting or ending, a notification, compaction, the
-- host's own tools, memvault's record of what it gave an agent) is kept among its
-- documents with no words in the index and nothing to embed (search/documents.py; the
-- hooks are ingest/envelope.py's NO_WORK_HOOKS): a search never returns it, and
-- thousands of sessions' notices holding a request's words crowded the work out of its
-- candidates. Those indexed before lose their postings and any vector here, with the
-- tokens they counted in their length and the index's totals. Their neighbours, which
-- held their words as context, are re-indexed in the background: each bookkeeping
-- observation is logged as changed, and the index re-reads it with its neighbours. Idle
-- board rows nobody described are written again by the vault's next scan.
CREATE TABLE bookkeeping_0019 AS
SELECT id FROM documents
WHERE kind = 'observation' AND (
    meta::jsonb ->> 'type' = 'host_internal'
    OR meta::jsonb ->> 'hookType' IN (
        'session_start', 'session_end', 'notification', 'pre_compact', 'post_compact',
        'context_injected'
    )
);

UPDATE document_totals SET tokens = tokens - (
    SELECT coalesce(sum(t.frequency), 0)
    FROM document_terms t JOIN bookkeeping_0019 b ON b.id = t.document_id
);

UPDATE documents SET length = documents.length - counted.tokens
FROM (
    SELECT t.document_id, sum(t.frequency) AS tokens
    FROM document_terms t JOIN bookkeeping_0019 b ON b.id = t.document_id
    GROUP BY t.document_id
) counted
WHERE documents.id = counted.document_id;

DELETE FROM document_terms t USING bookkeeping_0019 b WHERE b.id = t.document_id;

DELETE FROM document_vectors v USING bookkeeping_0019 b WHERE b.id = v.document_id;

UPDATE documents SET embed_text = ''
FROM bookkeeping_0019 b WHERE b.id = documents.id AND documents.embed_text <> '';

DROP TABLE bookkeeping_0019;

-- The change log's ids are drawn as store/postgres/derived.py (_log_changes) draws them:
-- under its advisory lock (append.OBSERVATION_CHANGES_LOCK, 0x6D760002), held to commit,
-- so a follower never reads past an id committed later.
SELECT pg_advisory_xact_lock(1836449794);

WITH chosen AS (
    SELECT event_seq, row_number() OVER (ORDER BY event_seq) AS n
    FROM observations
    WHERE type = 'host_internal' OR hook_type IN (
        'session_start', 'session_end', 'notification', 'pre_compact', 'post_compact',
        'context_injected'
    )
), bumped AS (
    UPDATE sequences SET value = value + (SELECT count(*) FROM chosen)
    WHERE name = 'observation_changes'
    RETURNING value
)
INSERT INTO observation_changes (id, event_seq)
SELECT bumped.value - (SELECT count(*) FROM chosen) + chosen.n, chosen.event_seq
FROM chosen, bumped;
