-- An observation that says nothing of its own (a turn's end with no text: its body is its
-- title) was indexed with its neighbours' words as context, so a search could answer with a
-- result reading only "Turn ended". Such documents now hold their own words only; those
-- indexed before lose their context here, in place, and every other document is left as it
-- is (making the whole log's documents again would keep new events waiting behind it).
UPDATE documents_fts SET context = ''
WHERE rowid IN (SELECT id FROM documents WHERE kind = 'observation' AND body = title);
