"""Reading a graph delta in tests: entity names, and relations by name."""

from __future__ import annotations


def names(delta, kind):
    return sorted(e.name for e in delta.of_kind(kind))


def relations(delta, relation=None):
    """(source name, relation, target name) of every relation, sorted; a ``related_to``
    pair (which has no direction) in name order."""
    found = []
    for r in delta.relations.values():
        if relation is None or r.relation == relation:
            a, b = delta.entities[r.source].name, delta.entities[r.target].name
            if r.relation == "related_to":
                a, b = sorted((a, b))
            found.append((a, r.relation, b))
    return sorted(found)
