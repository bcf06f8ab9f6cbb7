-- Vectors carry the order they were written in, so a process that does not embed (a
-- server whose indexing runs in `memvault worker`) can load only the ones new to it.
ALTER TABLE document_vectors ADD COLUMN stamp INTEGER NOT NULL DEFAULT 0;
CREATE INDEX document_vectors_stamp ON document_vectors (model, stamp);
