"""The entity graph in SQLite: merging deltas, bounded queries, counts, forgetting a
memory, and reset.

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
import sqlite3
from collections.abc import Sequence

from memvault import jsontext
from memvault.domain import Event, Watermark
from memvault.graph.model import (
    EDGE_CAP,
    MATCH_CAP,
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
)
from memvault.store.rows import chunks as _chunks
from memvault.store.rows import counted as _counted
from memvault.store.rows import graph_node as _node
from memvault.store.rows import without_source as _without

_NODE = "id, kind, key, name, mentions, first_seen, last_seen, sources"
_EDGE = "src, dst, relation, weight, last_seen, sources"

# The request path's queries, each answered from an index (tests/graph checks the plans).
NODE_BY_REF = f"SELECT {_NODE} FROM graph_nodes WHERE kind = ? AND key = ?"
TOP_NODES = f"SELECT {_NODE} FROM graph_nodes ORDER BY mentions DESC, id LIMIT ? OFFSET ?"
NODES_OF_KIND = (
    f"SELECT {_NODE} FROM graph_nodes WHERE kind = ? ORDER BY mentions DESC, id LIMIT ? OFFSET ?"
)
KEYS_STARTING = f"SELECT {_NODE} FROM graph_nodes WHERE key >= ? AND key < ? LIMIT ?"
NAMES_CONTAINING = "SELECT rowid FROM graph_names WHERE graph_names MATCH ? LIMIT ?"
EDGES_OUT = "SELECT dst, weight FROM graph_edges WHERE src = ? ORDER BY weight DESC LIMIT ?"
EDGES_IN = "SELECT src, weight FROM graph_edges WHERE dst = ? ORDER BY weight DESC LIMIT ?"
COUNTS = "SELECT name, value FROM graph_counts"


def nodes_by_id_query(count: int) -> str:
    return f"SELECT {_NODE} FROM graph_nodes WHERE id IN ({', '.join('?' * count)})"


def edges_among_query(count: int) -> str:
    """The strongest edges among ``count`` nodes: looked up by key, pair by pair (at most
    ``count`` squared lookups), then sorted, so a cap keeps the strongest."""
    marks = ", ".join("?" * count)
    return (
        f"SELECT {_EDGE} FROM graph_edges WHERE src IN ({marks}) AND dst IN ({marks}) "
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


# -- writes -------------------------------------------------------------------------------


def advance(
    conn: sqlite3.Connection, session_id: str, through: Watermark, after: int | None
) -> bool:
    """Move the session's graph watermark to ``through`` if it is behind it (and still at
    ``after``, when given); whether it moved."""
    row = conn.execute(
        "SELECT graph_extracted_seq FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return False
    stored = row[0] or 0
    if stored >= (through.seq or 0) or (after is not None and stored != after):
        return False
    conn.execute(
        "UPDATE sessions SET graph_extracted_at = ?, graph_extracted_seq = ? WHERE id = ?",
        (through.at, through.seq, session_id),
    )
    return True


def write(conn: sqlite3.Connection, delta: GraphDelta) -> None:
    ids = {ref: _merge_node(conn, entity) for ref, entity in delta.entities.items()}
    for relation in delta.relations.values():
        _merge_edge(conn, ids[relation.source], ids[relation.target], relation)


def _merge_node(conn: sqlite3.Connection, entity: Entity) -> int:
    row = conn.execute(
        "SELECT id, sources FROM graph_nodes WHERE kind = ? AND key = ?",
        (entity.kind, entity.key),
    ).fetchone()
    if row is None:
        node = conn.execute(
            "INSERT INTO graph_nodes (kind, key, name, mentions, first_seen, last_seen, sources) "
            "VALUES (?, ?, ?, 0, ?, ?, '[]') RETURNING id",
            (entity.kind, entity.key, entity.name, entity.first_seen, entity.last_seen),
        ).fetchone()[0]
        conn.execute("INSERT INTO graph_names (rowid, key) VALUES (?, ?)", (node, entity.key))
        _count(conn, f"node:{entity.kind}")
        row = (node, "[]")
    node = row[0]
    added = [
        source
        for source in entity.sources
        if conn.execute(
            "INSERT OR IGNORE INTO graph_node_sources (node_id, source) VALUES (?, ?)",
            (node, source),
        ).rowcount
    ]
    if added:
        conn.execute(
            "UPDATE graph_nodes SET mentions = mentions + ?, first_seen = min(first_seen, ?), "
            "last_seen = max(last_seen, ?), sources = ? WHERE id = ?",
            (
                len(added),
                entity.first_seen,
                entity.last_seen,
                jsontext.dumps(bounded(json.loads(row[1]), added)),
                node,
            ),
        )
    return node


def _merge_edge(conn: sqlite3.Connection, src: int, dst: int, relation: Relation) -> None:
    key = (src, dst, relation.relation)
    row = conn.execute(
        "SELECT sources FROM graph_edges WHERE src = ? AND dst = ? AND relation = ?", key
    ).fetchone()
    if row is None:
        conn.execute(
            "INSERT INTO graph_edges (src, dst, relation, weight, last_seen, sources) "
            "VALUES (?, ?, ?, 0, ?, '[]')",
            (*key, relation.last_seen),
        )
        _count(conn, f"edge:{relation.relation}")
        row = ("[]",)
    added = [
        source
        for source in relation.sources
        if conn.execute(
            "INSERT OR IGNORE INTO graph_edge_sources (src, dst, relation, source) "
            "VALUES (?, ?, ?, ?)",
            (*key, source),
        ).rowcount
    ]
    if added:
        conn.execute(
            "UPDATE graph_edges SET weight = weight + ?, last_seen = max(last_seen, ?), "
            "sources = ? WHERE src = ? AND dst = ? AND relation = ?",
            (
                len(added),
                relation.last_seen,
                jsontext.dumps(bounded(json.loads(row[0]), added)),
                *key,
            ),
        )


def _count(conn: sqlite3.Connection, name: str, step: int = 1) -> None:
    conn.execute(
        "INSERT INTO graph_counts (name, value) VALUES (?, ?) "
        "ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
        (name, step),
    )


def forget(conn: sqlite3.Connection, source: str) -> None:
    """Take the memory ``source`` off every node and edge it was seen in: one mention or
    one unit of weight less, the row gone at none (a node with its edges). Reads only the
    rows the memory touched, through indexes."""
    for src, dst, relation in conn.execute(EDGE_MEMBERS_OF, (source,)).fetchall():
        conn.execute(
            "DELETE FROM graph_edge_sources "
            "WHERE src = ? AND dst = ? AND relation = ? AND source = ?",
            (src, dst, relation, source),
        )
        row = conn.execute(
            "UPDATE graph_edges SET weight = weight - 1 "
            "WHERE src = ? AND dst = ? AND relation = ? RETURNING weight, sources",
            (src, dst, relation),
        ).fetchone()
        if row is None:
            continue
        if row[0] <= 0:
            _drop_edge(conn, src, dst, relation)
        else:
            conn.execute(
                "UPDATE graph_edges SET sources = ? WHERE src = ? AND dst = ? AND relation = ?",
                (_without(row[1], source), src, dst, relation),
            )
    for (node,) in conn.execute(NODE_MEMBERS_OF, (source,)).fetchall():
        conn.execute(
            "DELETE FROM graph_node_sources WHERE node_id = ? AND source = ?", (node, source)
        )
        row = conn.execute(
            "UPDATE graph_nodes SET mentions = mentions - 1 WHERE id = ? "
            "RETURNING mentions, sources, kind",
            (node,),
        ).fetchone()
        if row is None:
            continue
        if row[0] <= 0:
            _drop_node(conn, node, row[2])
        else:
            conn.execute(
                "UPDATE graph_nodes SET sources = ? WHERE id = ?", (_without(row[1], source), node)
            )


def _drop_edge(conn: sqlite3.Connection, src: int, dst: int, relation: str) -> None:
    conn.execute(
        "DELETE FROM graph_edges WHERE src = ? AND dst = ? AND relation = ?", (src, dst, relation)
    )
    conn.execute(
        "DELETE FROM graph_edge_sources WHERE src = ? AND dst = ? AND relation = ?",
        (src, dst, relation),
    )
    _count(conn, f"edge:{relation}", -1)


def _drop_node(conn: sqlite3.Connection, node: int, kind: str) -> None:
    """Delete a node, its members, its name and every edge at either end of it."""
    edges = conn.execute(
        "SELECT src, dst, relation FROM graph_edges WHERE src = ? "
        "UNION SELECT src, dst, relation FROM graph_edges WHERE dst = ?",
        (node, node),
    ).fetchall()
    for edge in edges:
        _drop_edge(conn, *edge)
    conn.execute("DELETE FROM graph_node_sources WHERE node_id = ?", (node,))
    conn.execute("DELETE FROM graph_names WHERE rowid = ?", (node,))
    conn.execute("DELETE FROM graph_nodes WHERE id = ?", (node,))
    _count(conn, f"node:{kind}", -1)


def reset(conn: sqlite3.Connection) -> GraphStats:
    """Empty the graph and send every session's graph watermark back to the start; what
    the graph held."""
    held = stats(conn)
    for table in (
        "graph_nodes",
        "graph_names",
        "graph_edges",
        "graph_counts",
        "graph_node_sources",
        "graph_edge_sources",
    ):
        conn.execute(f"DELETE FROM {table}")
    conn.execute(
        "UPDATE sessions SET graph_extracted_at = NULL, graph_extracted_seq = NULL "
        "WHERE graph_extracted_seq IS NOT NULL"
    )
    return held


# -- reads --------------------------------------------------------------------------------


def sessions_behind(conn: sqlite3.Connection, limit: int) -> list[str]:
    """Sessions with events past their graph watermark, the quietest first."""
    return [row[0] for row in conn.execute(SESSIONS_BEHIND, (limit,))]


def events_before(conn: sqlite3.Connection, session_id: str, seq: int, limit: int) -> list[Event]:
    """The session's last ``limit`` events up to ``seq``, in the order they happened."""
    rows = conn.execute(EVENTS_BEFORE, (session_id, seq, limit)).fetchall()
    return [Event(*row[:10], payload=json.loads(row[10])) for row in reversed(rows)]


def stats(conn: sqlite3.Connection) -> GraphStats:
    counts = dict(conn.execute(COUNTS).fetchall())
    return GraphStats(
        nodes_by_kind=_counted(counts, "node:"),
        edges_by_relation=_counted(counts, "edge:"),
    )


def query(
    conn: sqlite3.Connection,
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
    return (kind is None or row[1] == kind) and folded in row[2]


def _walk(conn: sqlite3.Connection, start: Ref, depth: int) -> tuple[list[tuple], bool]:
    """Breadth first from ``start``, strongest edges first; whether a bound cut it short."""
    first = conn.execute(NODE_BY_REF, start).fetchone()
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


def _hop(conn: sqlite3.Connection, frontier: list[int], seen: set[int]) -> tuple[list[int], bool]:
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


def _named(conn: sqlite3.Connection, folded: str) -> tuple[list[tuple], bool]:
    """Nodes whose key contains ``folded`` (3+ characters) or starts with it (shorter),
    the exact name first, then the most mentioned."""
    if len(folded) >= 3:
        # FTS5 reads a NUL as the end of the query text ("unterminated string").
        phrase = '"' + folded.replace("\x00", " ").replace('"', '""') + '"'
        ids = [r[0] for r in conn.execute(NAMES_CONTAINING, (phrase, MATCH_CAP + 1))]
        rows = _nodes_by_id(conn, ids[:MATCH_CAP])
        cut = len(ids) > MATCH_CAP
    else:
        rows = conn.execute(
            KEYS_STARTING, (folded, folded + "\U0010ffff", MATCH_CAP + 1)
        ).fetchall()
        cut = len(rows) > MATCH_CAP
        rows = rows[:MATCH_CAP]
    rows.sort(key=lambda r: (r[2] != folded, not r[2].startswith(folded), -r[4], r[0]))
    return rows, cut


def _nodes_by_id(conn: sqlite3.Connection, ids: Sequence[int]) -> list[tuple]:
    rows: list[tuple] = []
    for chunk in _chunks(ids, 500):
        rows += conn.execute(nodes_by_id_query(len(chunk)), chunk).fetchall()
    return rows


def _edges_among(conn: sqlite3.Connection, rows: list[tuple]) -> tuple[list[GraphEdge], bool]:
    """The edges among the nodes of an answer, the strongest ``EDGE_CAP`` of them."""
    if not rows:
        return [], False
    ids = {row[0]: node_id(row[1], row[2]) for row in rows}
    found = conn.execute(edges_among_query(len(ids)), (*ids, *ids, EDGE_CAP + 1)).fetchall()
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
