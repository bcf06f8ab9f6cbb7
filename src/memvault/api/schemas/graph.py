"""Answers of the graph routes: a slice of nodes and edges, counts, a reset."""

from __future__ import annotations

from typing import Literal

from memvault.api.schemas.shape import Count, Shape


class NodeProperties(Shape):
    mentions: Count
    firstSeen: str
    lastSeen: str


class Node(Shape):
    id: str
    type: str
    name: str
    properties: NodeProperties
    sourceObservationIds: list[str]
    createdAt: str


class Edge(Shape):
    id: str
    type: str
    sourceNodeId: str
    targetNodeId: str
    weight: int
    sourceObservationIds: list[str]
    lastSeen: str


class GraphSlice(Shape):
    success: Literal[True]
    nodes: list[Node]
    edges: list[Edge]
    depth: Count
    truncated: bool
    limit: int
    offset: Count


class GraphCounts(Shape):
    totalNodes: Count
    totalEdges: Count
    nodesByType: dict[str, Count]
    edgesByType: dict[str, Count]


class GraphStats(GraphCounts):
    success: Literal[True]


class GraphCleared(Shape):
    success: Literal[True]
    cleared: GraphCounts
