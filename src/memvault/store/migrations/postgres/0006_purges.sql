-- The audit of purges: when each ran and how much it replaced, never the text it looked for.
CREATE TABLE purges (
    id          BIGSERIAL PRIMARY KEY,
    purged_at   TEXT COLLATE "C" NOT NULL,
    place_count INTEGER NOT NULL,
    row_count   INTEGER NOT NULL,
    match_count INTEGER NOT NULL
);
