"""The entity graph in PostgreSQL: merging deltas, bounded queries, counts, forgetting a
memory, and reset; the same graph, in the same order, as ``sqlite_graph`` answers.

A node is merged by (kind, key) and an edge by (source, target, relation). Each records
every memory id it was seen in (``graph_node_sources``, ``graph_edge_sources``); a mention,
or an edge's weight, grows only for a memory not recorded yet. Every write takes the graph's
advisory lock first: replicas merging the same node one after another never both insert
it, and node ids are drawn as SQLite draws rowids (one past the largest). Every query reads
through an index and stops at the bounds of ``memvault.graph.model``; where SQLite's order
comes from an index, it is said here (ties by the index's next columns). Names of three or
more characters are found by substring through a trigram index (``pg_trgm``), as the
SQLite engine's trigram FTS5 table finds them; shorter ones by key prefix.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from memvault import jsontext
from memvault.domain import Watermark
from memvault.graph.model import (
    EDGE_CAP,
    MATCH_CAP,
    MAX_DEPTH,
    MAX_LIMIT,
    MAX_OFFSET,
    NEIGHBOURS_PER_NODE,
    NODES_PER_HOP,
    Entity,
    GraphDelta,
    GraphEdge,
    GraphSlice,
    GraphStats,
    Ref,
    Relation,
    bounded,
    node_id,
    parse_node_id,
)
from memvault.store.contract import Graph
from memvault.store.rows import chunks as _chunks
from memvault.store.rows import counted as _counted
from memvault.store.rows import graph_node as _node
from memvault.store.rows import without_source as _without

# pg_advisory_xact_lock key of the graph's writes (beside the index's, 0x6D76_0010).
GRAPH_LOCK = 0x6D76_0011

_NODE = "id, kind, key, name, mentions, first_seen, last_seen, sources"
_EDGE = "src, dst, relation, weight, last_seen, sources"

NODE_BY_REF = f"SELECT {_NODE} FROM graph_nodes WHERE kind = %s AND key = %s"
TOP_NODES = f"SELECT {_NODE} FROM graph_nodes ORDER BY mentions DESC, id LIMIT %s OFFSET %s"
NODES_OF_KIND = (
    f"SELECT {_NODE} FROM graph_nodes WHERE kind = %s ORDER BY mentions DESC, id LIMIT %s OFFSET %s"
)
KEYS_STARTING = (
    f"SELECT {_NODE} FROM graph_nodes WHERE key >= %s AND key < %s ORDER BY key, id LIMIT %s"
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
NODES_BY_ID = f"SELECT {_NODE} FROM graph_nodes WHERE id = ANY(%s::bigint[]) ORDER BY id"
EDGES_AMONG = (
    f"SELECT {_EDGE} FROM graph_edges WHERE src = ANY(%s::bigint[]) AND dst = ANY(%s::bigint[]) "
    "ORDER BY weight DESC, src, dst, relation LIMIT %s"
)
SESSIONS_BEHIND = (
    "SELECT id FROM sessions "
    "WHERE coalesce(summarized_seq, 0) > coalesce(graph_extracted_seq, 0) "
    "ORDER BY last_received_at, id LIMIT %s"
)
COUNTS = "SELECT name, value FROM graph_counts"

_TABLES = (
    "graph_nodes",
    "graph_edges",
    "graph_counts",
    "graph_node_sources",
    "graph_edge_sources",
)


# -- writes -------------------------------------------------------------------------------


def lock(conn) -> None:
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (GRAPH_LOCK,))


def advance(conn, session_id: str, through: Watermark, after: int | None) -> bool:
    """Move the session's graph watermark to ``through`` if it is behind it (and still at
    ``after``, when given); whether it moved."""
    row = conn.execute(
        "SELECT graph_extracted_seq FROM sessions WHERE id = %s FOR UPDATE", (session_id,)
    ).fetchone()
    if row is None:
        return False
    stored = row[0] or 0
    if stored >= (through.seq or 0) or (after is not None and stored != after):
        return False
    conn.execute(
        "UPDATE sessions SET graph_extracted_at = %s, graph_extracted_seq = %s WHERE id = %s",
        (through.at, through.seq, session_id),
    )
    return True


def write(conn, delta: GraphDelta) -> None:
    ids = {ref: _merge_node(conn, entity) for ref, entity in delta.entities.items()}
    for relation in delta.relations.values():
        _merge_edge(conn, ids[relation.source], ids[relation.target], relation)


def _added(conn, sql: str, key: tuple, sources: Sequence[str]) -> list[str]:
    """The sources not recorded yet, in the delta's order, now recorded."""
    wanted = list(dict.fromkeys(sources))
    if not wanted:
        return []
    new = {row[0] for row in conn.execute(sql, (*key, wanted)).fetchall()}
    return [source for source in wanted if source in new]


def _text(value: str) -> str:
    """A name or key as PostgreSQL can hold it: a NUL (which SQLite keeps) becomes U+FFFD,
    when written and when asked for, so the node is still one and still found."""
    return value.replace("\x00", "\ufffd")


def _merge_node(conn, entity: Entity) -> int:
    key = _text(entity.key)
    row = conn.execute(
        "SELECT id, sources FROM graph_nodes WHERE kind = %s AND key = %s", (entity.kind, key)
    ).fetchone()
    if row is None:
        node = conn.execute(
            "INSERT INTO graph_nodes (id, kind, key, name, mentions, first_seen, last_seen, "
            "sources) SELECT coalesce(max(id), 0) + 1, %s, %s, %s, 0, %s, %s, '[]' "
            "FROM graph_nodes RETURNING id",
            (entity.kind, key, _text(entity.name), entity.first_seen, entity.last_seen),
        ).fetchone()[0]
        _count(conn, f"node:{entity.kind}")
        row = (node, "[]")
    node = row[0]
    added = _added(
        conn,
        "INSERT INTO graph_node_sources (node_id, source) SELECT %s, s FROM unnest(%s::text[]) s "
        "ON CONFLICT DO NOTHING RETURNING source",
        (node,),
        entity.sources,
    )
    if added:
        conn.execute(
            "UPDATE graph_nodes SET mentions = mentions + %s, "
            "first_seen = least(first_seen, %s), last_seen = greatest(last_seen, %s), "
            "sources = %s WHERE id = %s",
            (
                len(added),
                entity.first_seen,
                entity.last_seen,
                jsontext.dumps(bounded(json.loads(row[1]), added)),
                node,
            ),
        )
    return node


def _merge_edge(conn, src: int, dst: int, relation: Relation) -> None:
    key = (src, dst, relation.relation)
    row = conn.execute(
        "SELECT sources FROM graph_edges WHERE src = %s AND dst = %s AND relation = %s", key
    ).fetchone()
    if row is None:
        conn.execute(
            "INSERT INTO graph_edges (src, dst, relation, weight, last_seen, sources) "
            "VALUES (%s, %s, %s, 0, %s, '[]')",
            (*key, relation.last_seen),
        )
        _count(conn, f"edge:{relation.relation}")
        row = ("[]",)
    added = _added(
        conn,
        "INSERT INTO graph_edge_sources (src, dst, relation, source) "
        "SELECT %s, %s, %s, s FROM unnest(%s::text[]) s ON CONFLICT DO NOTHING RETURNING source",
        key,
        relation.sources,
    )
    if added:
        conn.execute(
            "UPDATE graph_edges SET weight = weight + %s, last_seen = greatest(last_seen, %s), "
            "sources = %s WHERE src = %s AND dst = %s AND relation = %s",
            (
                len(added),
                relation.last_seen,
                jsontext.dumps(bounded(json.loads(row[0]), added)),
                *key,
            ),
        )


def _count(conn, name: str, step: int = 1) -> None:
    conn.execute(
        "INSERT INTO graph_counts (name, value) VALUES (%s, %s) "
        "ON CONFLICT (name) DO UPDATE SET value = graph_counts.value + excluded.value",
        (name, step),
    )


def forget(conn, source: str) -> None:
    """Take the memory ``source`` off every node and edge it was seen in: one mention or
    one unit of weight less, the row gone at none (a node with its edges)."""
    edges = conn.execute(
        "DELETE FROM graph_edge_sources WHERE source = %s RETURNING src, dst, relation",
        (source,),
    ).fetchall()
    for src, dst, relation in sorted(edges):
        row = conn.execute(
            "UPDATE graph_edges SET weight = weight - 1 "
            "WHERE src = %s AND dst = %s AND relation = %s RETURNING weight, sources",
            (src, dst, relation),
        ).fetchone()
        if row is None:
            continue
        if row[0] <= 0:
            _drop_edge(conn, src, dst, relation)
        else:
            conn.execute(
                "UPDATE graph_edges SET sources = %s WHERE src = %s AND dst = %s AND relation = %s",
                (_without(row[1], source), src, dst, relation),
            )
    nodes = conn.execute(
        "DELETE FROM graph_node_sources WHERE source = %s RETURNING node_id", (source,)
    ).fetchall()
    for (node,) in sorted(nodes):
        row = conn.execute(
            "UPDATE graph_nodes SET mentions = mentions - 1 WHERE id = %s "
            "RETURNING mentions, sources, kind",
            (node,),
        ).fetchone()
        if row is None:
            continue
        if row[0] <= 0:
            _drop_node(conn, node, row[2])
        else:
            conn.execute(
                "UPDATE graph_nodes SET sources = %s WHERE id = %s",
                (_without(row[1], source), node),
            )


def _drop_edge(conn, src: int, dst: int, relation: str) -> None:
    conn.execute(
        "DELETE FROM graph_edges WHERE src = %s AND dst = %s AND relation = %s",
        (src, dst, relation),
    )
    conn.execute(
        "DELETE FROM graph_edge_sources WHERE src = %s AND dst = %s AND relation = %s",
        (src, dst, relation),
    )
    _count(conn, f"edge:{relation}", -1)


def _drop_node(conn, node: int, kind: str) -> None:
    """Delete a node, its members and every edge at either end of it."""
    edges = conn.execute(
        "SELECT src, dst, relation FROM graph_edges WHERE src = %s "
        "UNION SELECT src, dst, relation FROM graph_edges WHERE dst = %s",
        (node, node),
    ).fetchall()
    for edge in sorted(edges):
        _drop_edge(conn, *edge)
    conn.execute("DELETE FROM graph_node_sources WHERE node_id = %s", (node,))
    conn.execute("DELETE FROM graph_nodes WHERE id = %s", (node,))
    _count(conn, f"node:{kind}", -1)


def reset(conn) -> GraphStats:
    """Empty the graph and send every session's graph watermark back to the start; what
    the graph held."""
    held = stats(conn)
    for table in _TABLES:
        conn.execute(f"DELETE FROM {table}")
    conn.execute(
        "UPDATE sessions SET graph_extracted_at = NULL, graph_extracted_seq = NULL "
        "WHERE graph_extracted_seq IS NOT NULL"
    )
    return held


# -- reads --------------------------------------------------------------------------------


def stats(conn) -> GraphStats:
    counts = dict(conn.execute(COUNTS).fetchall())
    return GraphStats(
        nodes_by_kind=_counted(counts, "node:"),
        edges_by_relation=_counted(counts, "edge:"),
    )


def query(
    conn,
    *,
    start: Ref | None,
    kind: str | None,
    text: str | None,
    depth: int,
    limit: int,
    offset: int,
) -> GraphSlice:
    """Nodes (a page of them) and the edges among them: reached from ``start`` within
    ``depth`` hops, or named like ``text``, or the most mentioned; ``kind`` and ``text``
    narrow a walk."""
    folded = " ".join((text or "").casefold().split())
    if start is not None:
        rows, cut = _walk(conn, start, depth)
        rows = [r for r in rows if _fits(r, kind, folded)]
    elif folded:
        rows, cut = _named(conn, folded)
        rows = [r for r in rows if _fits(r, kind, "")]
    else:
        listed = conn.execute(
            NODES_OF_KIND if kind else TOP_NODES,
            (kind, limit + 1, offset) if kind else (limit + 1, offset),
        ).fetchall()
        rows, cut, offset = listed, False, 0
    page = rows[offset : offset + limit]
    nodes = [_node(row) for row in page]
    edges, edges_cut = _edges_among(conn, page)
    return GraphSlice(
        nodes=nodes,
        edges=edges,
        depth=depth if start is not None else 0,
        truncated=cut or edges_cut or len(rows) > offset + limit,
    )


def _fits(row: tuple, kind: str | None, folded: str) -> bool:
    return (kind is None or row[1] == kind) and _text(folded) in row[2]


def _walk(conn, start: Ref, depth: int) -> tuple[list[tuple], bool]:
    """Breadth first from ``start``, strongest edges first; whether a bound cut it short."""
    first = conn.execute(NODE_BY_REF, (start[0], _text(start[1]))).fetchone()
    if first is None:
        return [], False
    order, seen, frontier, cut = [first[0]], {first[0]}, [first[0]], False
    for _ in range(depth):
        frontier, hop_cut = _hop(conn, frontier, seen)
        order += frontier
        cut = cut or hop_cut
        if not frontier:
            break
    found = {row[0]: row for row in _nodes_by_id(conn, order)}
    return [found[n] for n in order if n in found], cut


def _hop(conn, frontier: list[int], seen: set[int]) -> tuple[list[int], bool]:
    """The nodes one hop from ``frontier`` not seen yet (added to ``seen``), and whether a
    bound left some out."""
    reached: list[int] = []
    cut = False
    for node in frontier:
        out = conn.execute(EDGES_OUT, (node, NEIGHBOURS_PER_NODE)).fetchall()
        into = conn.execute(EDGES_IN, (node, NEIGHBOURS_PER_NODE)).fetchall()
        cut = cut or NEIGHBOURS_PER_NODE in (len(out), len(into))
        for other, _weight in sorted([*out, *into], key=lambda n: -n[1]):
            if other in seen:
                continue
            if len(reached) == NODES_PER_HOP:
                return reached, True
            seen.add(other)
            reached.append(other)
    return reached, cut


def _named(conn, folded: str) -> tuple[list[tuple], bool]:
    """Nodes whose key contains ``folded`` (3+ characters) or starts with it (shorter),
    the exact name first, then the most mentioned."""
    if len(folded) >= 3:
        # As the SQLite engine asks FTS5, which reads a NUL as the end of its query.
        needle = folded.replace("\x00", " ")
        pattern = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        ids = [r[0] for r in conn.execute(NAMES_CONTAINING, (pattern, MATCH_CAP + 1))]
        rows = _nodes_by_id(conn, ids[:MATCH_CAP])
        cut = len(ids) > MATCH_CAP
    else:
        start = _text(folded)
        rows = conn.execute(KEYS_STARTING, (start, start + "\U0010ffff", MATCH_CAP + 1)).fetchall()
        cut = len(rows) > MATCH_CAP
        rows = rows[:MATCH_CAP]
    stored = _text(folded)
    rows.sort(key=lambda r: (r[2] != stored, not r[2].startswith(stored), -r[4], r[0]))
    return rows, cut


def _nodes_by_id(conn, ids: Sequence[int]) -> list[tuple]:
    rows: list[tuple] = []
    for chunk in _chunks(ids, 500):
        rows += conn.execute(NODES_BY_ID, (list(chunk),)).fetchall()
    return rows


def _edges_among(conn, rows: list[tuple]) -> tuple[list[GraphEdge], bool]:
    """The edges among the nodes of an answer, the strongest ``EDGE_CAP`` of them."""
    if not rows:
        return [], False
    ids = {row[0]: node_id(row[1], row[2]) for row in rows}
    found = conn.execute(EDGES_AMONG, (list(ids), list(ids), EDGE_CAP + 1)).fetchall()
    edges = [
        GraphEdge(
            source=ids[src],
            target=ids[dst],
            relation=relation,
            weight=weight,
            last_seen=last_seen,
            sources=json.loads(sources),
        )
        for src, dst, relation, weight, last_seen, sources in found[:EDGE_CAP]
    ]
    edges.sort(key=lambda e: (-e.weight, e.id))
    return edges, len(found) > EDGE_CAP


class PostgresGraph(Graph):
    """The graph part of the PostgreSQL store. Every statement runs through the store's
    ``_transaction``, so a database that cannot be reached fails as ``StoreUnavailable``."""

    _transaction: Callable

    def write_graph(
        self,
        session_id: str,
        delta: GraphDelta,
        *,
        through: Watermark,
        after: int | None = None,
    ) -> bool:
        def op(conn) -> bool:
            lock(conn)
            if not advance(conn, session_id, through, after):
                return False
            write(conn, delta)
            return True

        return self._transaction(op)

    def write_fragment_graph(self, delta: GraphDelta) -> None:
        def op(conn) -> None:
            lock(conn)
            write(conn, delta)

        self._transaction(op)

    def graph_query(
        self,
        *,
        start: str | None = None,
        kind: str | None = None,
        text: str | None = None,
        depth: int = 1,
        limit: int = 50,
        offset: int = 0,
    ) -> GraphSlice:
        ref = None if start is None else parse_node_id(start)
        if start is not None and ref is None:
            return GraphSlice(nodes=[], edges=[])
        return self._transaction(
            lambda conn: query(
                conn,
                start=ref,
                kind=kind,
                text=text,
                depth=max(0, min(depth, MAX_DEPTH)),
                limit=max(1, min(limit, MAX_LIMIT)),
                offset=max(0, min(offset, MAX_OFFSET)),
            )
        )

    def graph_stats(self) -> GraphStats:
        return self._transaction(stats)

    def reset_graph(self) -> GraphStats:
        def op(conn) -> GraphStats:
            lock(conn)
            return reset(conn)

        return self._transaction(op)

    def forget_graph_source(self, source: str) -> None:
        def op(conn) -> None:
            lock(conn)
            forget(conn, source)

        self._transaction(op)

    def sessions_behind_graph(self, *, limit: int) -> list[str]:
        rows = self._transaction(lambda conn: conn.execute(SESSIONS_BEHIND, (limit,)).fetchall())
        return [row[0] for row in rows]
