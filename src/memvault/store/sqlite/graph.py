"""The entity graph's SQLite side: its statements and the steps its SQL takes its own way
(the algorithm is ``store.graph_queries``). Names are found through a trigram FTS5 table
(``graph_names``); the request path's queries each read through an index (tests/graph
checks the plans).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memvault.store.graph_dialect import EDGE, NODE, GraphDialect

if TYPE_CHECKING:
    from memvault.graph.model import Entity

NODE_BY_REF = f"SELECT {NODE} FROM graph_nodes WHERE kind = ? AND key = ?"
TOP_NODES = f"SELECT {NODE} FROM graph_nodes ORDER BY mentions DESC, id LIMIT ? OFFSET ?"
NODES_OF_KIND = (
    f"SELECT {NODE} FROM graph_nodes WHERE kind = ? ORDER BY mentions DESC, id LIMIT ? OFFSET ?"
)
KEYS_STARTING = f"SELECT {NODE} FROM graph_nodes WHERE key >= ? AND key < ? LIMIT ?"
NAMES_CONTAINING = "SELECT rowid FROM graph_names WHERE graph_names MATCH ? LIMIT ?"
EDGES_OUT = "SELECT dst, weight FROM graph_edges WHERE src = ? ORDER BY weight DESC LIMIT ?"
EDGES_IN = "SELECT src, weight FROM graph_edges WHERE dst = ? ORDER BY weight DESC LIMIT ?"


def nodes_by_id_query(count: int) -> str:
    return f"SELECT {NODE} FROM graph_nodes WHERE id IN ({', '.join('?' * count)})"


def edges_among_query(count: int) -> str:
    """The strongest edges among ``count`` nodes: looked up by key, pair by pair (at most
    ``count`` squared lookups), then sorted, so a cap keeps the strongest."""
    marks = ", ".join("?" * count)
    return (
        f"SELECT {EDGE} FROM graph_edges WHERE src IN ({marks}) AND dst IN ({marks}) "
        "ORDER BY weight DESC, src, dst, relation LIMIT ?"
    )


# Sessions with summarized events the graph has not read (after a reset, in an older
# database): the graph catches up to the summary.
SESSIONS_BEHIND = (
    "SELECT id FROM sessions INDEXED BY sessions_graph_behind "
    "WHERE coalesce(summarized_seq, 0) > coalesce(graph_extracted_seq, 0) "
    "ORDER BY last_received_at LIMIT ?"
)
# The events just before a watermark, read again as a run's context (newest first).
EVENTS_BEFORE = (
    "SELECT seq, session_id, client_event_id, hook_type, project, cwd, agent_id, "
    "client_timestamp, occurred_at, received_at, payload FROM events "
    "INDEXED BY events_session_time WHERE session_id = ? AND seq <= ? "
    "ORDER BY occurred_at DESC, seq DESC LIMIT ?"
)
NODE_MEMBERS_OF = "SELECT node_id FROM graph_node_sources WHERE source = ?"
EDGE_MEMBERS_OF = "SELECT src, dst, relation FROM graph_edge_sources WHERE source = ?"

_SOURCE_COLUMNS = {
    "graph_node_sources": "node_id, source",
    "graph_edge_sources": "src, dst, relation, source",
}


class SQLiteGraph(GraphDialect):
    NODE_BY_REF = NODE_BY_REF
    TOP_NODES = TOP_NODES
    NODES_OF_KIND = NODES_OF_KIND
    KEYS_STARTING = KEYS_STARTING
    NAMES_CONTAINING = NAMES_CONTAINING
    EDGES_OUT = EDGES_OUT
    EDGES_IN = EDGES_IN
    SESSIONS_BEHIND = SESSIONS_BEHIND
    TABLES = (
        "graph_nodes",
        "graph_names",
        "graph_edges",
        "graph_counts",
        "graph_node_sources",
        "graph_edge_sources",
    )

    def insert_node(self, conn, entity: Entity) -> int:
        node = conn.execute(
            "INSERT INTO graph_nodes (kind, key, name, mentions, first_seen, last_seen, sources) "
            "VALUES (?, ?, ?, 0, ?, ?, '[]') RETURNING id",
            (entity.kind, entity.key, entity.name, entity.first_seen, entity.last_seen),
        ).fetchone()[0]
        conn.execute("INSERT INTO graph_names (rowid, key) VALUES (?, ?)", (node, entity.key))
        return node

    def added_sources(self, conn, table: str, key: tuple, sources: Sequence[str]) -> list[str]:
        columns = _SOURCE_COLUMNS[table]
        insert = (
            f"INSERT OR IGNORE INTO {table} ({columns}) VALUES ({', '.join('?' * (len(key) + 1))})"
        )
        return [source for source in sources if conn.execute(insert, (*key, source)).rowcount]

    def take_edge_members(self, conn, source: str) -> list[tuple]:
        edges = conn.execute(EDGE_MEMBERS_OF, (source,)).fetchall()
        conn.execute("DELETE FROM graph_edge_sources WHERE source = ?", (source,))
        return edges

    def take_node_members(self, conn, source: str) -> list[int]:
        nodes = [row[0] for row in conn.execute(NODE_MEMBERS_OF, (source,)).fetchall()]
        conn.execute("DELETE FROM graph_node_sources WHERE source = ?", (source,))
        return nodes

    def drop_name(self, conn, node: int) -> None:
        conn.execute("DELETE FROM graph_names WHERE rowid = ?", (node,))

    def name_needle(self, folded: str) -> str:
        # FTS5 reads a NUL as the end of the query text ("unterminated string").
        return '"' + folded.replace("\x00", " ").replace('"', '""') + '"'

    def nodes_by_id(self, conn, ids: Sequence[int]) -> list[tuple]:
        return conn.execute(nodes_by_id_query(len(ids)), list(ids)).fetchall()

    def edges_among(self, conn, ids: list[int], cap: int) -> list[tuple]:
        return conn.execute(edges_among_query(len(ids)), (*ids, *ids, cap)).fetchall()


DIALECT = SQLiteGraph()
