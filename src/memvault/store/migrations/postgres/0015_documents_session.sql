-- A context request weighs its words as if its own session were not in the index: the
-- session's documents are read by their session.
CREATE INDEX documents_session ON documents (session_id, kind);
