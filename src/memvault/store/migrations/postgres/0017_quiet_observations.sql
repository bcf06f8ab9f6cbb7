-- An observation that says nothing of its own (a turn's end with no text) was indexed with
-- its neighbours' words as context, so a search could answer with a result reading only
-- "Turn ended". Such documents now hold their own words only: the indexer makes every
-- observation's document again, in the background, from the log's start. The others'
-- content hashes are unchanged, so they keep their revisions and vectors.
DELETE FROM cursors WHERE name = 'index:observations';
