"""The entity graph's PostgreSQL side: its statements and the steps its SQL takes its own
way (the algorithm is ``store.graph_queries``); the same graph, in the same order, as the
SQLite engine answers.

Every write takes the graph's advisory lock first: replicas merging the same node one after
another never both insert it, and node ids are drawn as SQLite draws rowids (one past the
largest). Where SQLite's order comes from an index, it is said here (ties by the index's
next columns). Names of three or more characters are found by substring through a trigram
index (``pg_trgm``), as the SQLite engine's trigram FTS5 table finds them; shorter ones by
key prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memvault.store.engine import like_literal
from memvault.store.graph_dialect import EDGE, NODE, GraphDialect

if TYPE_CHECKING:
    from memvault.graph.model import Entity

# pg_advisory_xact_lock key of the graph's writes (beside the index's, 0x6D76_0010).
GRAPH_LOCK = 0x6D76_0011

_SOURCES = {
    "graph_node_sources": "INSERT INTO graph_node_sources (node_id, source) "
    "SELECT %s, s FROM unnest(%s::text[]) s ON CONFLICT DO NOTHING RETURNING source",
    "graph_edge_sources": "INSERT INTO graph_edge_sources (src, dst, relation, source) "
    "SELECT %s, %s, %s, s FROM unnest(%s::text[]) s ON CONFLICT DO NOTHING RETURNING source",
}


class PostgresGraph(GraphDialect):
    mark = "%s"
    LEAST = "least"
    GREATEST = "greatest"
    FOR_UPDATE = " FOR UPDATE"
    NODE_BY_REF = f"SELECT {NODE} FROM graph_nodes WHERE kind = %s AND key = %s"
    TOP_NODES = f"SELECT {NODE} FROM graph_nodes ORDER BY mentions DESC, id LIMIT %s OFFSET %s"
    NODES_OF_KIND = (
        f"SELECT {NODE} FROM graph_nodes WHERE kind = %s "
        "ORDER BY mentions DESC, id LIMIT %s OFFSET %s"
    )
    KEYS_STARTING = (
        f"SELECT {NODE} FROM graph_nodes WHERE key >= %s AND key < %s ORDER BY key, id LIMIT %s"
    )
    NAMES_CONTAINING = "SELECT id FROM graph_nodes WHERE key LIKE %s ORDER BY id LIMIT %s"
    EDGES_OUT = (
        "SELECT dst, weight FROM graph_edges WHERE src = %s "
        "ORDER BY weight DESC, dst, relation LIMIT %s"
    )
    EDGES_IN = (
        "SELECT src, weight FROM graph_edges WHERE dst = %s "
        "ORDER BY weight DESC, src, relation LIMIT %s"
    )
    SESSIONS_BEHIND = (
        "SELECT id FROM sessions "
        "WHERE coalesce(summarized_seq, 0) > coalesce(graph_extracted_seq, 0) "
        "ORDER BY last_received_at, id LIMIT %s"
    )
    TABLES = (
        "graph_nodes",
        "graph_edges",
        "graph_counts",
        "graph_node_sources",
        "graph_edge_sources",
    )

    def text(self, value: str) -> str:
        """A NUL (which SQLite keeps) becomes U+FFFD, when written and when asked for, so
        the node is still one and still found."""
        return value.replace("\x00", "\ufffd")

    def lock(self, conn) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (GRAPH_LOCK,))

    def insert_node(self, conn, entity: Entity) -> int:
        return conn.execute(
            "INSERT INTO graph_nodes (id, kind, key, name, mentions, first_seen, last_seen, "
            "sources) SELECT coalesce(max(id), 0) + 1, %s, %s, %s, 0, %s, %s, '[]' "
            "FROM graph_nodes RETURNING id",
            (
                entity.kind,
                self.text(entity.key),
                self.text(entity.name),
                entity.first_seen,
                entity.last_seen,
            ),
        ).fetchone()[0]

    def added_sources(self, conn, table: str, key: tuple, sources: Sequence[str]) -> list[str]:
        wanted = list(dict.fromkeys(sources))
        if not wanted:
            return []
        new = {row[0] for row in conn.execute(_SOURCES[table], (*key, wanted)).fetchall()}
        return [source for source in wanted if source in new]

    def take_edge_members(self, conn, source: str) -> list[tuple]:
        return conn.execute(
            "DELETE FROM graph_edge_sources WHERE source = %s RETURNING src, dst, relation",
            (source,),
        ).fetchall()

    def take_node_members(self, conn, source: str) -> list[int]:
        rows = conn.execute(
            "DELETE FROM graph_node_sources WHERE source = %s RETURNING node_id", (source,)
        ).fetchall()
        return [row[0] for row in rows]

    def name_needle(self, folded: str) -> str:
        # As the SQLite engine asks FTS5, which reads a NUL as the end of its query.
        needle = folded.replace("\x00", " ")
        return "%" + like_literal(needle) + "%"

    def nodes_by_id(self, conn, ids: Sequence[int]) -> list[tuple]:
        return conn.execute(
            f"SELECT {NODE} FROM graph_nodes WHERE id = ANY(%s::bigint[]) ORDER BY id",
            (list(ids),),
        ).fetchall()

    def edges_among(self, conn, ids: list[int], cap: int) -> list[tuple]:
        return conn.execute(
            f"SELECT {EDGE} FROM graph_edges WHERE src = ANY(%s::bigint[]) "
            "AND dst = ANY(%s::bigint[]) ORDER BY weight DESC, src, dst, relation LIMIT %s",
            (ids, ids, cap),
        ).fetchall()


DIALECT = PostgresGraph()
