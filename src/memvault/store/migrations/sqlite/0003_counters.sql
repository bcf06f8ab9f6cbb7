-- Row counts for health, kept in step by the writer, so health never counts a whole table.

CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO counters (name, value) SELECT 'events', count(*) FROM events;
INSERT INTO counters (name, value) SELECT 'observations', count(*) FROM observations;
INSERT INTO counters (name, value) SELECT 'sessions', count(*) FROM sessions;
