-- Board and fragment writes a replica that does not own the vault queues for the owner.
CREATE TABLE vault_writes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    request_key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    result TEXT,
    created_at TEXT NOT NULL,
    applied_at TEXT
);
CREATE INDEX vault_writes_due ON vault_writes (id) WHERE done = 0;
