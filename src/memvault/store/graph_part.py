"""The graph part both engines share; each engine hands it a ``GraphDialect``.

The algorithm (``graph_queries``) is loaded when the graph is first used, not with the
store: the graph's model comes in a package that also holds its extractor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memvault.domain import Watermark
from memvault.store.contract import Graph
from memvault.store.engine import Engine
from memvault.store.graph_dialect import GraphDialect

if TYPE_CHECKING:
    from memvault.graph.model import GraphDelta, GraphSlice, GraphStats


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
            lambda conn: queries.query(conn, d, **asked, limit=limit, offset=offset)
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
