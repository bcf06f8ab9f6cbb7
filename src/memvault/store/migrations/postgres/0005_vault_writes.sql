-- Board and fragment writes a replica that does not own the vault queues for the owner
-- (see store/postgres_vault.py). The owner applies them in id order and marks each done.
CREATE TABLE vault_writes (
    id          BIGSERIAL PRIMARY KEY,
    request_key TEXT COLLATE "C" NOT NULL UNIQUE,
    kind        TEXT NOT NULL,
    payload     TEXT NOT NULL,
    done        BOOLEAN NOT NULL DEFAULT false,
    result      TEXT,
    created_at  TEXT NOT NULL,
    applied_at  TEXT
);
CREATE INDEX vault_writes_due ON vault_writes (id) WHERE NOT done;
