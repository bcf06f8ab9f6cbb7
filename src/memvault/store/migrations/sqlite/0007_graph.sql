-- The entity graph: a derived catalog of what sessions and fragments mention, with the
-- indexes its bounded queries need. It is never listed whole; a reset empties it and the
-- pipeline fills it again from the event log.

-- One node per (kind, normalized key). `sources` holds the most recent memory ids
-- (obs_<seq>, fragment ids) it was seen in, as a JSON list; `mentions` counts distinct ones.
CREATE TABLE graph_nodes (
    id         INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL,
    key        TEXT NOT NULL,
    name       TEXT NOT NULL,
    mentions   INTEGER NOT NULL DEFAULT 0,
    first_seen TEXT NOT NULL,
    last_seen  TEXT NOT NULL,
    sources    TEXT NOT NULL DEFAULT '[]'
);

CREATE UNIQUE INDEX graph_nodes_identity ON graph_nodes (kind, key);
-- The most mentioned first, overall and of one kind; short names by key prefix.
CREATE INDEX graph_nodes_mentions ON graph_nodes (mentions DESC, id);
CREATE INDEX graph_nodes_kind_mentions ON graph_nodes (kind, mentions DESC, id);
CREATE INDEX graph_nodes_key ON graph_nodes (key);

-- Substring search over node keys (rowid = graph_nodes.id), for names of 3+ characters.
CREATE VIRTUAL TABLE graph_names USING fts5(key, tokenize = 'trigram');

-- One edge per (source, target, relation); `weight` counts the distinct memories that
-- showed it. A walk follows a node's strongest edges out and in.
CREATE TABLE graph_edges (
    src       INTEGER NOT NULL,
    dst       INTEGER NOT NULL,
    relation  TEXT NOT NULL,
    weight    INTEGER NOT NULL DEFAULT 0,
    last_seen TEXT NOT NULL,
    sources   TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (src, dst, relation)
) WITHOUT ROWID;

CREATE INDEX graph_edges_out ON graph_edges (src, weight DESC);
CREATE INDEX graph_edges_in ON graph_edges (dst, weight DESC);

-- Nodes per kind ('node:<kind>') and edges per relation ('edge:<relation>'), kept in step
-- by the same transactions that add them, so stats never count a table.
CREATE TABLE graph_counts (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
