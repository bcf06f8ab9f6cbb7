-- An observation that says nothing of its own (a turn's end with no text: its body is its
-- title) was indexed with its neighbours' words as context, so a search could answer with a
-- result reading only "Turn ended". Such documents now hold their own words only; those
-- indexed before lose their context postings here (field 2), with the tokens they counted
-- in their length and the index's totals, and every other document is left as it is.
UPDATE document_totals SET tokens = tokens - (
    SELECT coalesce(sum(t.frequency), 0)
    FROM document_terms t JOIN documents d ON d.id = t.document_id
    WHERE t.field = 2 AND d.kind = 'observation' AND d.body = d.title
);

UPDATE documents SET length = documents.length - quiet.tokens
FROM (
    SELECT t.document_id, sum(t.frequency) AS tokens
    FROM document_terms t JOIN documents d ON d.id = t.document_id
    WHERE t.field = 2 AND d.kind = 'observation' AND d.body = d.title
    GROUP BY t.document_id
) quiet
WHERE documents.id = quiet.document_id;

DELETE FROM document_terms t USING documents d
WHERE d.id = t.document_id AND t.field = 2 AND d.kind = 'observation' AND d.body = d.title;
