"""The graph part both engines share, and what each engine hands it: a ``GraphDialect``
of its own statements (where its SQL differs) and the few steps it takes its own way.

The algorithm (``graph_queries``) is loaded when the graph is first used, not with the
store: the graph's model comes in a package that also holds its extractor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memvault.domain import Watermark
from memvault.store.contract import Graph
from memvault.store.engine import Engine, _marked

if TYPE_CHECKING:
    from memvault.graph.model import Entity, GraphDelta, GraphSlice, GraphStats

NODE = "id, kind, key, name, mentions, first_seen, last_seen, sources"
EDGE = "src, dst, relation, weight, last_seen, sources"


class GraphDialect:
    """An engine's side of the graph: statements (with ``?`` marks, ``q`` makes them its
    own) and the steps its SQL takes differently."""

    mark = "?"
    NODE_BY_REF: str
    TOP_NODES: str
    NODES_OF_KIND: str
    KEYS_STARTING: str
    NAMES_CONTAINING: str
    EDGES_OUT: str
    EDGES_IN: str
    SESSIONS_BEHIND: str
    TABLES: tuple[str, ...]
    LEAST = "min"
    GREATEST = "max"
    FOR_UPDATE = ""

    def q(self, text: str) -> str:
        return text if self.mark == "?" else _marked(text, self.mark)

    def text(self, value: str) -> str:
        """A name or key as the engine can hold it."""
        return value

    def lock(self, conn) -> None:
        """Taken before every graph write (replicas take turns on PostgreSQL)."""

    def insert_node(self, conn, entity: Entity) -> int:
        raise NotImplementedError

    def added_sources(self, conn, table: str, key: tuple, sources: Sequence[str]) -> list[str]:
        """The sources not recorded yet for a node (``graph_node_sources``) or an edge
        (``graph_edge_sources``), in the delta's order, now recorded."""
        raise NotImplementedError

    def take_edge_members(self, conn, source: str) -> list[tuple]:
        """(src, dst, relation) of each edge ``source`` was seen in, its record deleted."""
        raise NotImplementedError

    def take_node_members(self, conn, source: str) -> list[int]:
        """Each node ``source`` was seen in, its record deleted."""
        raise NotImplementedError

    def drop_name(self, conn, node: int) -> None:
        """Forget a deleted node's name where the engine indexes names apart."""

    def name_needle(self, folded: str) -> str:
        """What ``NAMES_CONTAINING`` is asked for names holding ``folded``."""
        raise NotImplementedError

    def nodes_by_id(self, conn, ids: Sequence[int]) -> list[tuple]:
        raise NotImplementedError

    def edges_among(self, conn, ids: list[int], cap: int) -> list[tuple]:
        raise NotImplementedError


class SharedGraph(Engine, Graph):
    """The graph part of each store; ``GRAPH`` is the engine's dialect."""

    GRAPH: GraphDialect

    def write_graph(
        self,
        session_id: str,
        delta: GraphDelta,
        *,
        through: Watermark,
        after: int | None = None,
    ) -> bool:
        queries, d = _queries(), self.GRAPH

        def op(conn) -> bool:
            d.lock(conn)
            if not queries.advance(conn, d, session_id, through, after):
                return False
            queries.write(conn, d, delta)
            return True

        return self._writing(op)

    def write_fragment_graph(self, delta: GraphDelta) -> None:
        queries, d = _queries(), self.GRAPH

        def op(conn) -> None:
            d.lock(conn)
            queries.write(conn, d, delta)

        self._writing(op)

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
        queries, d = _queries(), self.GRAPH
        asked = {"start": start, "kind": kind, "text": text, "depth": depth}
        return self._reading(
            lambda conn: queries.answer(conn, d, **asked, limit=limit, offset=offset)
        )

    def graph_stats(self) -> GraphStats:
        return self._reading(_queries().stats)

    def reset_graph(self) -> GraphStats:
        queries, d = _queries(), self.GRAPH

        def op(conn) -> GraphStats:
            d.lock(conn)
            return queries.reset(conn, d)

        return self._writing(op)

    def forget_graph_source(self, source: str) -> None:
        queries, d = _queries(), self.GRAPH

        def op(conn) -> None:
            d.lock(conn)
            queries.forget(conn, d, source)

        self._writing(op)

    def sessions_behind_graph(self, *, limit: int) -> list[str]:
        return [row[0] for row in self._select(self.GRAPH.SESSIONS_BEHIND, (limit,))]


def _queries():
    from memvault.store import graph_queries

    return graph_queries
