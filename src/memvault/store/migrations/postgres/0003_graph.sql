-- The entity graph: a derived catalog of what sessions and fragments mention, with the
-- indexes its bounded queries need (see store/postgres_graph.py). It is never listed
-- whole; a reset empties it and the pipeline fills it again from the event log.

-- Substring search over node keys (SQLite's trigram FTS5 table) is a trigram index.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- One node per (kind, normalized key). `sources` holds the most recent memory ids
-- (obs_<seq>, fragment ids) it was seen in, as a JSON list; `mentions` counts distinct ones.
-- Ids are drawn as SQLite draws a rowid (one past the largest), under the graph's advisory
-- lock, so both engines number the same graph alike.
CREATE TABLE graph_nodes (
    id         BIGINT PRIMARY KEY,
    kind       TEXT COLLATE "C" NOT NULL,
    key        TEXT COLLATE "C" NOT NULL,
    name       TEXT NOT NULL,
    mentions   INTEGER NOT NULL DEFAULT 0,
    first_seen TEXT COLLATE "C" NOT NULL,
    last_seen  TEXT COLLATE "C" NOT NULL,
    sources    TEXT NOT NULL DEFAULT '[]'
);

CREATE UNIQUE INDEX graph_nodes_identity ON graph_nodes (kind, key);
-- The most mentioned first, overall and of one kind; short names by key prefix; longer
-- ones by the trigrams they contain.
CREATE INDEX graph_nodes_mentions ON graph_nodes (mentions DESC, id);
CREATE INDEX graph_nodes_kind_mentions ON graph_nodes (kind, mentions DESC, id);
CREATE INDEX graph_nodes_key ON graph_nodes (key, id);
CREATE INDEX graph_nodes_key_trigrams ON graph_nodes USING gin (key gin_trgm_ops);

-- One edge per (source, target, relation); `weight` counts the distinct memories that
-- showed it. A walk follows a node's strongest edges out and in.
CREATE TABLE graph_edges (
    src       BIGINT NOT NULL,
    dst       BIGINT NOT NULL,
    relation  TEXT COLLATE "C" NOT NULL,
    weight    INTEGER NOT NULL DEFAULT 0,
    last_seen TEXT COLLATE "C" NOT NULL,
    sources   TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (src, dst, relation)
);

CREATE INDEX graph_edges_out ON graph_edges (src, weight DESC, dst, relation);
CREATE INDEX graph_edges_in ON graph_edges (dst, weight DESC, src, relation);

-- Nodes per kind ('node:<kind>') and edges per relation ('edge:<relation>'), kept in step
-- by the same transactions that add them, so stats never count a table.
CREATE TABLE graph_counts (
    name  TEXT COLLATE "C" PRIMARY KEY,
    value BIGINT NOT NULL
);

-- Exact membership: every memory id a node or an edge was seen in, so a mention or a
-- weight counts each memory once, and one memory can be taken off the graph.
CREATE TABLE graph_node_sources (
    node_id BIGINT NOT NULL,
    source  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (node_id, source)
);

CREATE INDEX graph_node_sources_source ON graph_node_sources (source);

CREATE TABLE graph_edge_sources (
    src      BIGINT NOT NULL,
    dst      BIGINT NOT NULL,
    relation TEXT COLLATE "C" NOT NULL,
    source   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (src, dst, relation, source)
);

CREATE INDEX graph_edge_sources_source ON graph_edge_sources (source);

-- Sessions whose graph is behind their summary (after a reset) are found without a scan,
-- the quietest first.
CREATE INDEX IF NOT EXISTS sessions_graph_behind
    ON sessions (last_received_at, id)
    WHERE coalesce(summarized_seq, 0) > coalesce(graph_extracted_seq, 0);
