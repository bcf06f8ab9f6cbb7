-- A session's bookkeeping (a session starting or ending, a notification, compaction, the
-- host's own tools, memvault's record of what it gave an agent) is kept among its
-- documents with no words in the index (search/documents.py, BOOKKEEPING_HOOKS): a search
-- never returns it, and thousands of sessions' notices holding a request's words crowded
-- the work out of its candidates. Those indexed before lose their postings here, with the
-- tokens they counted in their length and the index's totals. None of them has a vector
-- (they are never embedded). Idle board rows nobody described are written again by the
-- vault's next scan.
CREATE TEMPORARY TABLE bookkeeping ON COMMIT DROP AS
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
    FROM document_terms t JOIN bookkeeping b ON b.id = t.document_id
);

UPDATE documents SET length = documents.length - counted.tokens
FROM (
    SELECT t.document_id, sum(t.frequency) AS tokens
    FROM document_terms t JOIN bookkeeping b ON b.id = t.document_id
    GROUP BY t.document_id
) counted
WHERE documents.id = counted.document_id;

DELETE FROM document_terms t USING bookkeeping b WHERE b.id = t.document_id;
