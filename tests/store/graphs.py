"""Graph deltas for the store's graph tests, written as mentions and relations."""

from __future__ import annotations

from memvault.graph.model import GraphDelta

AT = "2026-11-30T10:00:00.000Z"


def delta_of(*mentions, relations=(), at: str = AT) -> GraphDelta:
    """A delta from (kind, name, source) mentions and (a, b, relation, source) relations."""
    delta = GraphDelta()
    refs = {}
    for kind, name, source in mentions:
        refs[name] = delta.add(kind, name, source=source, at=at)
    for a, b, relation, source in relations:
        delta.relate(refs[a], refs[b], relation, origin=source, at=at)
    return delta
