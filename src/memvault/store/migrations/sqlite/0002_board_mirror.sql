-- A mirror of the session board (memory/index.md) for queries. The file is the truth:
-- this table is replaced from it after every board operation and whenever it changes.

CREATE TABLE board_rows (
    session_id    TEXT PRIMARY KEY,
    agent_name    TEXT NOT NULL,
    topic         TEXT NOT NULL,
    summary       TEXT NOT NULL,
    keywords      TEXT NOT NULL,
    status        TEXT NOT NULL,
    referenced_by TEXT NOT NULL DEFAULT '[]',
    started_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    position      INTEGER NOT NULL
);

CREATE INDEX board_rows_status ON board_rows (status, position);
