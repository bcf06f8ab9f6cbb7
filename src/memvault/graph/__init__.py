"""The entity graph: files, functions, libraries, errors, concepts and decisions that
sessions and fragments mention, and how they relate.

It is a derived catalog, rebuilt from the event log and the vault at will: extraction is
offline and deterministic (``extract``), the store keeps it indexed, and every query on it
is bounded (``model`` holds the bounds).
"""

from memvault.graph.extract import extract_graph, file_name, graph_of_fragment
from memvault.graph.model import (
    KINDS,
    RELATIONS,
    Entity,
    GraphDelta,
    GraphEdge,
    GraphNode,
    GraphSlice,
    GraphStats,
    Relation,
    node_id,
    parse_node_id,
)
from memvault.graph.service import extract_session_graph

__all__ = [
    "KINDS",
    "RELATIONS",
    "Entity",
    "GraphDelta",
    "GraphEdge",
    "GraphNode",
    "GraphSlice",
    "GraphStats",
    "Relation",
    "extract_graph",
    "extract_session_graph",
    "file_name",
    "graph_of_fragment",
    "node_id",
    "parse_node_id",
]
