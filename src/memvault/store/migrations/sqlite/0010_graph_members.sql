-- Exact membership for the entity graph: every memory id (obs_<seq>, a fragment's id) a
-- node or an edge was seen in, so a mention or a weight counts each memory once however
-- long ago it was first seen, and one memory can be taken off the graph. The `sources`
-- lists on the rows stay as they were: the latest few, for display.
CREATE TABLE graph_node_sources (
    node_id INTEGER NOT NULL,
    source  TEXT NOT NULL,
    PRIMARY KEY (node_id, source)
) WITHOUT ROWID;

CREATE INDEX graph_node_sources_source ON graph_node_sources (source);

CREATE TABLE graph_edge_sources (
    src      INTEGER NOT NULL,
    dst      INTEGER NOT NULL,
    relation TEXT NOT NULL,
    source   TEXT NOT NULL,
    PRIMARY KEY (src, dst, relation, source)
) WITHOUT ROWID;

CREATE INDEX graph_edge_sources_source ON graph_edge_sources (source);

-- A graph written before: its rows' kept lists are what is known of their members. Their
-- counts stay (they include memories that dropped out of the lists); `memvault graph
-- reset` reads everything again when exact counts matter more.
INSERT OR IGNORE INTO graph_node_sources (node_id, source)
    SELECT n.id, j.value FROM graph_nodes AS n, json_each(n.sources) AS j
    WHERE j.type = 'text';

INSERT OR IGNORE INTO graph_edge_sources (src, dst, relation, source)
    SELECT e.src, e.dst, e.relation, j.value FROM graph_edges AS e, json_each(e.sources) AS j
    WHERE j.type = 'text';

-- Sessions whose graph is behind their summary (after a reset, in a database older than
-- the graph) are found without a scan, the quietest first. A session's new events reach
-- the graph after its next summary, as the pipeline runs them.
CREATE INDEX sessions_graph_behind
    ON sessions (last_received_at)
    WHERE coalesce(summarized_seq, 0) > coalesce(graph_extracted_seq, 0);
