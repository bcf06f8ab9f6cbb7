-- A fragment's document now lists every session merged into it (`sources`), which a prompt
-- block reads to tell what an agent said once in passing only with its session. Fragments
-- indexed before are read again from their files at the next scan and written whole (their
-- vectors stay: what is embedded is the same).
UPDATE documents SET mtime = NULL, content_hash = '' WHERE kind = 'fragment';
