-- Sessions become retrieval units of their own (kind 'session').
ALTER TABLE documents DROP CONSTRAINT documents_kind_check;
ALTER TABLE documents ADD CONSTRAINT documents_kind_check
    CHECK (kind IN ('fragment', 'summary', 'session', 'observation'));
