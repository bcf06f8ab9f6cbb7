"""The graph part: the entity graph, a derived catalog of nodes and edges, written once for
both engines; each engine hands it a ``GraphDialect``.

The algorithm (``graph_queries``) is loaded when the graph is first used, not with the
store: the graph's model comes in a package that also holds its extractor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from memvault.domain import Watermark
from memvault.store.engine import Engine
from memvault.store.graph_dialect import GraphDialect

if TYPE_CHECKING:
    from memvault.graph.model import GraphDelta, GraphSlice, GraphStats

T = TypeVar("T")


class Graph(Engine, ABC):
    """The entity graph: a derived catalog of nodes and edges with their sources, written
    once on the engine's connections and its dialect."""

    @property
    @abstractmethod
    def GRAPH(self) -> GraphDialect:
        """The engine's side of the graph's SQL (``sqlite.graph``, ``postgres.graph``)."""

    def write_graph(
        self,
        session_id: str,
        delta: GraphDelta,
        *,
        through: Watermark,
        after: int | None = None,
    ) -> bool:
        """Merge what a session's events up to ``through`` showed into the graph and move
        its graph watermark there, in one transaction. False, writing nothing, when the
        watermark is already at or past ``through``, or (given ``after``) no longer at
        ``after``, where the batch began: a repeated or overtaken run counts nothing twice."""
        queries, d = _queries(), self.GRAPH

        def op(conn) -> bool:
            d.lock(conn)
            if not queries.advance(conn, d, session_id, through, after):
                return False
            queries.write(conn, d, delta)
            return True

        return self._writing(op)

    def write_fragment_graph(self, delta: GraphDelta) -> None:
        """Merge what a fragment showed; a source already recorded on a node or an edge
        adds no mention, so writing the same fragment again changes no count."""
        self._locked(_queries().write, delta)

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
        """A page of nodes and the edges among them: those within ``depth`` hops of the
        node ``start`` (an id, ``kind:key``), else those whose name contains ``text``,
        else the most mentioned; ``kind`` keeps one kind. Bounded whatever is asked (see
        ``memvault.graph.model``)."""
        queries, d = _queries(), self.GRAPH
        asked = {"start": start, "kind": kind, "text": text, "depth": depth}
        return self._reading(
            lambda conn: queries.query(conn, d, **asked, limit=limit, offset=offset)
        )

    def graph_stats(self) -> GraphStats:
        """Nodes per kind and edges per relation, from counters."""
        return self._reading(_queries().stats)

    def reset_graph(self) -> GraphStats:
        """Empty the graph and move every session's graph watermark back to the start, in
        one transaction; what the graph held."""
        return self._locked(_queries().reset)

    def forget_graph_source(self, source: str) -> None:
        """Take one memory id (a forgotten fragment's id, an ``obs_<seq>``) off every node
        and edge it was seen in, in one transaction: a mention or a unit of weight less
        each, a node (with its edges) or an edge gone when none is left. Indexed: only the
        rows the memory touched are read."""
        self._locked(_queries().forget, source)

    def sessions_behind_graph(self, *, limit: int) -> list[str]:
        """Sessions whose summary is past their graph watermark (after a reset, in a
        database older than the graph), the quietest first; from an index."""
        return [row[0] for row in self._select(self.GRAPH.SESSIONS_BEHIND, (limit,))]

    def _locked(self, change: Callable[..., T], *args) -> T:
        """``change(conn, dialect, *args)`` in one write that holds the graph's lock first."""
        d = self.GRAPH

        def op(conn) -> T:
            d.lock(conn)
            return change(conn, d, *args)

        return self._writing(op)


def _queries():
    from memvault.store import graph_queries

    return graph_queries
