"""Pure derivations from a session's captured events: observations read as steps, the
extractive session summary, the fragments worth keeping, and the graph's entities.

Nothing here touches the store, starts a thread or calls a model: each function takes
events (and their observations) and returns what they say. The pipeline's jobs call them
with the events past a watermark and write what they return.
"""

from memvault.derive.entities import extract_graph, file_name, graph_of_fragment
from memvault.derive.fragments import extract_fragments
from memvault.derive.summarize import Summary, has_real_work, snapshot_sections, summarize

__all__ = [
    "Summary",
    "extract_fragments",
    "extract_graph",
    "file_name",
    "graph_of_fragment",
    "has_real_work",
    "snapshot_sections",
    "summarize",
]
