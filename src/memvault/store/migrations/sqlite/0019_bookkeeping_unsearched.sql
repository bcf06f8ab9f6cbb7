-- A session's bookkeeping (a session starting or ending, a notification, compaction, the
-- host's own tools, memvault's record of what it gave an agent) is kept among its
-- documents with no words in the index (search/documents.py, BOOKKEEPING_HOOKS): a search
-- never returns it, and thousands of sessions' notices holding a request's words crowded
-- the work out of its candidates. Those indexed before lose their words here, in place.
-- None of them has a vector (they are never embedded). Idle board rows nobody described
-- are written again by the vault's next scan.
UPDATE documents_fts SET title = '', body = '', context = '', dates = ''
WHERE rowid IN (
    SELECT id FROM documents
    WHERE kind = 'observation' AND (
        json_extract(meta, '$.type') = 'host_internal'
        OR json_extract(meta, '$.hookType') IN (
            'session_start', 'session_end', 'notification', 'pre_compact', 'post_compact',
            'context_injected'
        )
    )
);
