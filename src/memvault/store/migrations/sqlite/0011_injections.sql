-- What each session was given in its memory blocks (fragments, board rows, observations,
-- a project summary, the report line), so a later block of the same session gives only
-- what is new, also after the server restarts. The record a person reads is the session's
-- `context_injected` event; this is the lookup.
CREATE TABLE injections (
    session_id  TEXT NOT NULL,
    kind        TEXT NOT NULL,
    item_id     TEXT NOT NULL,
    injected_at TEXT NOT NULL,
    PRIMARY KEY (session_id, kind, item_id)
) WITHOUT ROWID;
