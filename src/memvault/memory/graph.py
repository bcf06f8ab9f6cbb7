"""The graph as the faces read and reset it: a walk or a search, the counts, a reset that
the pipeline fills again."""

from __future__ import annotations

from memvault.graph.model import GraphSlice, GraphStats
from memvault.memory.pipeline import LazyPipeline
from memvault.store import Store


class Graph:
    """Queries over the derived graph of files, concepts, errors and decisions."""

    def __init__(self, store: Store, pipeline: LazyPipeline) -> None:
        self.store = store
        self._pipeline = pipeline

    def query(
        self,
        *,
        start: str | None = None,
        kind: str | None = None,
        text: str | None = None,
        depth: int = 1,
        limit: int = 50,
        offset: int = 0,
    ) -> GraphSlice:
        """A page of nodes and the edges among them (see ``Store.graph_query``)."""
        return self.store.graph_query(
            start=start, kind=kind, text=text, depth=depth, limit=limit, offset=offset
        )

    def stats(self) -> GraphStats:
        """Nodes per kind and edges per relation."""
        return self.store.graph_stats()

    def reset(self) -> GraphStats:
        """Empty the graph (what it held is the answer). Sessions are found behind their
        graph by the worker's signal round; the fragments' part is one queued job."""
        cleared = self.store.reset_graph()
        self._pipeline.get().regraph_fragments()
        return cleared
