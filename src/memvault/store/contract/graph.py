"""The graph part: the entity graph, a derived catalog of nodes and edges."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from memvault.domain import Watermark

if TYPE_CHECKING:
    from memvault.graph.model import GraphDelta, GraphSlice, GraphStats


class Graph(ABC):
    """The entity graph: a derived catalog of nodes and edges with their sources."""

    @abstractmethod
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

    @abstractmethod
    def write_fragment_graph(self, delta: GraphDelta) -> None:
        """Merge what a fragment showed; a source already recorded on a node or an edge
        adds no mention, so writing the same fragment again changes no count."""

    @abstractmethod
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

    @abstractmethod
    def graph_stats(self) -> GraphStats:
        """Nodes per kind and edges per relation, from counters."""

    @abstractmethod
    def reset_graph(self) -> GraphStats:
        """Empty the graph and move every session's graph watermark back to the start, in
        one transaction; what the graph held."""

    @abstractmethod
    def forget_graph_source(self, source: str) -> None:
        """Take one memory id (a forgotten fragment's id, an ``obs_<seq>``) off every node
        and edge it was seen in, in one transaction: a mention or a unit of weight less
        each, a node (with its edges) or an edge gone when none is left. Indexed: only the
        rows the memory touched are read."""

    @abstractmethod
    def sessions_behind_graph(self, *, limit: int) -> list[str]:
        """Sessions whose summary is past their graph watermark (after a reset, in a
        database older than the graph), the quietest first; from an index."""
