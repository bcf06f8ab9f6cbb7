"""The graph as the faces read and reset it: a walk or a search, the counts, a reset that
the pipeline fills again."""

from __future__ import annotations

from memvault.graph.model import GraphStats
from memvault.memory.pipeline import LazyPipeline
from memvault.store import Store


class Graph:
    """Queries over the derived graph of files, concepts, errors and decisions."""

    def __init__(self, store: Store, pipeline: LazyPipeline) -> None:
        self.store = store
        self._pipeline = pipeline
        # Reads are the store's own: a page of nodes and the edges among them
        # (``Store.graph_query``), nodes per kind and edges per relation.
        self.query = store.graph_query
        self.stats = store.graph_stats

    def reset(self) -> GraphStats:
        """Empty the graph (what it held is the answer). Sessions are found behind their
        graph by the worker's signal round; the fragments' part is one queued job."""
        cleared = self.store.reset_graph()
        self._pipeline.get().regraph_fragments()
        return cleared
