-- A session's bookkeeping (a session starting or ending, a notification, compaction, the
-- host's own tools, memvault's record of what it gave an agent) is kept among its
-- documents with no words in the index and nothing to embed (search/documents.py; the
-- hooks are ingest/envelope.py's NO_WORK_HOOKS): a search never returns it, and
-- thousands of sessions' notices holding a request's words crowded the work out of its
-- candidates. Those indexed before lose their words and any vector here, in place. Their
-- neighbours, which held their words as context, are re-indexed in the background: each
-- bookkeeping observation is logged as changed, and the index re-reads it with its
-- neighbours. Idle board rows nobody described are written again by the vault's next scan.
CREATE TABLE bookkeeping_0019 AS
SELECT id FROM documents
WHERE kind = 'observation' AND (
    json_extract(meta, '$.type') = 'host_internal'
    OR json_extract(meta, '$.hookType') IN (
        'session_start', 'session_end', 'notification', 'pre_compact', 'post_compact',
        'context_injected'
    )
);

UPDATE documents_fts SET title = '', body = '', context = '', dates = ''
WHERE rowid IN (SELECT id FROM bookkeeping_0019);

DELETE FROM document_vectors WHERE document_id IN (SELECT id FROM bookkeeping_0019);

UPDATE documents SET embed_text = ''
WHERE embed_text <> '' AND id IN (SELECT id FROM bookkeeping_0019);

DROP TABLE bookkeeping_0019;

INSERT INTO observation_changes (event_seq)
SELECT event_seq FROM observations
WHERE type = 'host_internal' OR hook_type IN (
    'session_start', 'session_end', 'notification', 'pre_compact', 'post_compact',
    'context_injected'
)
ORDER BY event_seq;
