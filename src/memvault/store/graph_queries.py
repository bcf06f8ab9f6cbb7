"""The entity graph, written once for both engines: merging deltas, bounded queries,
counts, forgetting a memory, and reset. Each engine hands in a ``GraphDialect``
(``graph_dialect``): its own statements where its SQL differs, and the few steps it takes its
own way.

A node is merged by (kind, key) and an edge by (source, target, relation). Each records
every memory id it was seen in (``graph_node_sources``, ``graph_edge_sources``); a mention,
or an edge's weight, grows only for a memory not recorded yet, so writing the same fragment
again, or reading a session's events again as context, adds nothing. Every query reads
through an index and stops at a bound (``memvault.graph.model``): a walk follows at most
``NEIGHBOURS_PER_NODE`` edges out of a node and reaches at most ``NODES_PER_HOP`` new nodes
per hop; a name search ranks at most ``MATCH_CAP`` matches.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

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
    GraphNode,
    GraphSlice,
    GraphStats,
    Ref,
    Relation,
    bounded,
    node_id,
    parse_node_id,
)
from memvault.store.graph_dialect import GraphDialect
from memvault.store.rows import chunks as _chunks
from memvault.store.rows import counted as _counted
from memvault.store.rows import without_source as _without

COUNTS = "SELECT name, value FROM graph_counts"


def _node(row: tuple) -> GraphNode:
    """A node as ``NODE`` selects it: its id, then its fields in ``GraphNode``'s order."""
    return GraphNode(*row[1:7], sources=json.loads(row[7]))


# -- writes -------------------------------------------------------------------------------


def advance(conn, d: GraphDialect, session_id: str, through: Watermark, after: int | None) -> bool:
    """Move the session's graph watermark to ``through`` if it is behind it (and still at
    ``after``, when given); whether it moved."""
    row = conn.execute(
        d.q(f"SELECT graph_extracted_seq FROM sessions WHERE id = ?{d.FOR_UPDATE}"),
        (session_id,),
    ).fetchone()
    if row is None:
        return False
    stored = row[0] or 0
    if stored >= (through.seq or 0) or (after is not None and stored != after):
        return False
    conn.execute(
        d.q("UPDATE sessions SET graph_extracted_at = ?, graph_extracted_seq = ? WHERE id = ?"),
        (through.at, through.seq, session_id),
    )
    return True


def write(conn, d: GraphDialect, delta: GraphDelta) -> None:
    ids = {ref: _merge_node(conn, d, entity) for ref, entity in delta.entities.items()}
    for relation in delta.relations.values():
        _merge_edge(conn, d, ids[relation.source], ids[relation.target], relation)


def _merge_node(conn, d: GraphDialect, entity: Entity) -> int:
    row = conn.execute(
        d.q("SELECT id, sources FROM graph_nodes WHERE kind = ? AND key = ?"),
        (entity.kind, d.text(entity.key)),
    ).fetchone()
    if row is None:
        node = d.insert_node(conn, entity)
        _count(conn, d, f"node:{entity.kind}")
        row = (node, "[]")
    node = row[0]
    added = d.added_sources(conn, "graph_node_sources", (node,), entity.sources)
    if added:
        conn.execute(
            d.q(
                f"UPDATE graph_nodes SET mentions = mentions + ?, "
                f"first_seen = {d.LEAST}(first_seen, ?), last_seen = {d.GREATEST}(last_seen, ?), "
                "sources = ? WHERE id = ?"
            ),
            (
                len(added),
                entity.first_seen,
                entity.last_seen,
                jsontext.dumps(bounded(json.loads(row[1]), added)),
                node,
            ),
        )
    return node


def _merge_edge(conn, d: GraphDialect, src: int, dst: int, relation: Relation) -> None:
    key = (src, dst, relation.relation)
    row = conn.execute(
        d.q("SELECT sources FROM graph_edges WHERE src = ? AND dst = ? AND relation = ?"), key
    ).fetchone()
    if row is None:
        conn.execute(
            d.q(
                "INSERT INTO graph_edges (src, dst, relation, weight, last_seen, sources) "
                "VALUES (?, ?, ?, 0, ?, '[]')"
            ),
            (*key, relation.last_seen),
        )
        _count(conn, d, f"edge:{relation.relation}")
        row = ("[]",)
    added = d.added_sources(conn, "graph_edge_sources", key, relation.sources)
    if added:
        conn.execute(
            d.q(
                f"UPDATE graph_edges SET weight = weight + ?, "
                f"last_seen = {d.GREATEST}(last_seen, ?), "
                "sources = ? WHERE src = ? AND dst = ? AND relation = ?"
            ),
            (
                len(added),
                relation.last_seen,
                jsontext.dumps(bounded(json.loads(row[0]), added)),
                *key,
            ),
        )


def _count(conn, d: GraphDialect, name: str, step: int = 1) -> None:
    conn.execute(
        d.q(
            "INSERT INTO graph_counts (name, value) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET value = graph_counts.value + excluded.value"
        ),
        (name, step),
    )


def forget(conn, d: GraphDialect, source: str) -> None:
    """Take the memory ``source`` off every node and edge it was seen in: one mention or
    one unit of weight less, the row gone at none (a node with its edges). Reads only the
    rows the memory touched, through indexes."""
    for src, dst, relation in sorted(d.take_edge_members(conn, source)):
        row = conn.execute(
            d.q(
                "UPDATE graph_edges SET weight = weight - 1 "
                "WHERE src = ? AND dst = ? AND relation = ? RETURNING weight, sources"
            ),
            (src, dst, relation),
        ).fetchone()
        if row is None:
            continue
        if row[0] <= 0:
            _drop_edge(conn, d, src, dst, relation)
        else:
            conn.execute(
                d.q(
                    "UPDATE graph_edges SET sources = ? WHERE src = ? AND dst = ? AND relation = ?"
                ),
                (_without(row[1], source), src, dst, relation),
            )
    for node in sorted(d.take_node_members(conn, source)):
        row = conn.execute(
            d.q(
                "UPDATE graph_nodes SET mentions = mentions - 1 WHERE id = ? "
                "RETURNING mentions, sources, kind"
            ),
            (node,),
        ).fetchone()
        if row is None:
            continue
        if row[0] <= 0:
            _drop_node(conn, d, node, row[2])
        else:
            conn.execute(
                d.q("UPDATE graph_nodes SET sources = ? WHERE id = ?"),
                (_without(row[1], source), node),
            )


def _drop_edge(conn, d: GraphDialect, src: int, dst: int, relation: str) -> None:
    for table in ("graph_edges", "graph_edge_sources"):
        conn.execute(
            d.q(f"DELETE FROM {table} WHERE src = ? AND dst = ? AND relation = ?"),
            (src, dst, relation),
        )
    _count(conn, d, f"edge:{relation}", -1)


def _drop_node(conn, d: GraphDialect, node: int, kind: str) -> None:
    """Delete a node, its members, its name and every edge at either end of it."""
    edges = conn.execute(
        d.q(
            "SELECT src, dst, relation FROM graph_edges WHERE src = ? "
            "UNION SELECT src, dst, relation FROM graph_edges WHERE dst = ?"
        ),
        (node, node),
    ).fetchall()
    for edge in sorted(edges):
        _drop_edge(conn, d, *edge)
    conn.execute(d.q("DELETE FROM graph_node_sources WHERE node_id = ?"), (node,))
    d.drop_name(conn, node)
    conn.execute(d.q("DELETE FROM graph_nodes WHERE id = ?"), (node,))
    _count(conn, d, f"node:{kind}", -1)


def reset(conn, d: GraphDialect) -> GraphStats:
    """Empty the graph and send every session's graph watermark back to the start; what
    the graph held."""
    held = stats(conn)
    for table in d.TABLES:
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
    d: GraphDialect,
    *,
    start: str | None,
    kind: str | None,
    text: str | None,
    depth: int,
    limit: int,
    offset: int,
) -> GraphSlice:
    """Nodes (a page of them) and the edges among them: reached from the node ``start``
    (an id) within ``depth`` hops, or named like ``text``, or the most mentioned; ``kind``
    and ``text`` narrow a walk. Every bound applies whatever is asked."""
    ref = None if start is None else parse_node_id(start)
    if start is not None and ref is None:
        return GraphSlice(nodes=[], edges=[])
    depth = max(0, min(depth, MAX_DEPTH))
    limit = max(1, min(limit, MAX_LIMIT))
    offset = max(0, min(offset, MAX_OFFSET))
    folded = " ".join((text or "").casefold().split())
    if ref is not None:
        rows, cut = _walk(conn, d, ref, depth)
        rows = [r for r in rows if _fits(d, r, kind, folded)]
    elif folded:
        rows, cut = _named(conn, d, folded)
        rows = [r for r in rows if _fits(d, r, kind, "")]
    else:
        listed = conn.execute(
            d.NODES_OF_KIND if kind else d.TOP_NODES,
            (kind, limit + 1, offset) if kind else (limit + 1, offset),
        ).fetchall()
        rows, cut, offset = listed, False, 0
    page = rows[offset : offset + limit]
    nodes = [_node(row) for row in page]
    edges, edges_cut = _edges_among(conn, d, page)
    return GraphSlice(
        nodes=nodes,
        edges=edges,
        depth=depth if ref is not None else 0,
        truncated=cut or edges_cut or len(rows) > offset + limit,
    )


def _fits(d: GraphDialect, row: tuple, kind: str | None, folded: str) -> bool:
    return (kind is None or row[1] == kind) and d.text(folded) in row[2]


def _walk(conn, d: GraphDialect, start: Ref, depth: int) -> tuple[list[tuple], bool]:
    """Breadth first from ``start``, strongest edges first; whether a bound cut it short."""
    first = conn.execute(d.NODE_BY_REF, (start[0], d.text(start[1]))).fetchone()
    if first is None:
        return [], False
    order, seen, frontier, cut = [first[0]], {first[0]}, [first[0]], False
    for _ in range(depth):
        frontier, hop_cut = _hop(conn, d, frontier, seen)
        order += frontier
        cut = cut or hop_cut
        if not frontier:
            break
    found = {row[0]: row for row in _nodes_by_id(conn, d, order)}
    return [found[n] for n in order if n in found], cut


def _hop(conn, d: GraphDialect, frontier: list[int], seen: set[int]) -> tuple[list[int], bool]:
    """The nodes one hop from ``frontier`` not seen yet (added to ``seen``), and whether a
    bound left some out."""
    reached: list[int] = []
    cut = False
    for node in frontier:
        out = conn.execute(d.EDGES_OUT, (node, NEIGHBOURS_PER_NODE)).fetchall()
        into = conn.execute(d.EDGES_IN, (node, NEIGHBOURS_PER_NODE)).fetchall()
        cut = cut or NEIGHBOURS_PER_NODE in (len(out), len(into))
        for other, _weight in sorted([*out, *into], key=lambda n: -n[1]):
            if other in seen:
                continue
            if len(reached) == NODES_PER_HOP:
                return reached, True
            seen.add(other)
            reached.append(other)
    return reached, cut


def _named(conn, d: GraphDialect, folded: str) -> tuple[list[tuple], bool]:
    """Nodes whose key contains ``folded`` (3+ characters) or starts with it (shorter),
    the exact name first, then the most mentioned."""
    stored = d.text(folded)
    if len(folded) >= 3:
        needle = d.name_needle(folded)
        ids = [r[0] for r in conn.execute(d.NAMES_CONTAINING, (needle, MATCH_CAP + 1))]
        rows = _nodes_by_id(conn, d, ids[:MATCH_CAP])
        cut = len(ids) > MATCH_CAP
    else:
        rows = conn.execute(
            d.KEYS_STARTING, (stored, stored + "\U0010ffff", MATCH_CAP + 1)
        ).fetchall()
        cut = len(rows) > MATCH_CAP
        rows = rows[:MATCH_CAP]
    rows.sort(key=lambda r: (r[2] != stored, not r[2].startswith(stored), -r[4], r[0]))
    return rows, cut


def _nodes_by_id(conn, d: GraphDialect, ids: Sequence[int]) -> list[tuple]:
    rows: list[tuple] = []
    for chunk in _chunks(ids, 500):
        rows += d.nodes_by_id(conn, chunk)
    return rows


def _edges_among(conn, d: GraphDialect, rows: list[tuple]) -> tuple[list[GraphEdge], bool]:
    """The edges among the nodes of an answer, the strongest ``EDGE_CAP`` of them."""
    if not rows:
        return [], False
    ids = {row[0]: node_id(row[1], row[2]) for row in rows}
    found = d.edges_among(conn, list(ids), EDGE_CAP + 1)
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
