"""The graph part both engines share; each engine hands it a ``GraphDialect``.

The algorithm (``graph_queries``) is loaded when the graph is first used, not with the
store: the graph's model comes in a package that also holds its extractor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from memvault.domain import Watermark
from memvault.store.contract import Graph
from memvault.store.engine import Engine
from memvault.store.graph_dialect import GraphDialect

if TYPE_CHECKING:
    from memvault.graph.model import GraphDelta, GraphSlice, GraphStats

T = TypeVar("T")


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
        queries, d = _queries(), self.GRAPH
        asked = {"start": start, "kind": kind, "text": text, "depth": depth}
        return self._reading(
            lambda conn: queries.query(conn, d, **asked, limit=limit, offset=offset)
        )

    def graph_stats(self) -> GraphStats:
        return self._reading(_queries().stats)

    def reset_graph(self) -> GraphStats:
        return self._locked(_queries().reset)

    def forget_graph_source(self, source: str) -> None:
        self._locked(_queries().forget, source)

    def sessions_behind_graph(self, *, limit: int) -> list[str]:
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
