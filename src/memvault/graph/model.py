"""The graph's vocabulary: entity kinds, relations, the delta an extraction produces, and
what a query returns.

An entity is named by its kind and a normalized key (case-folded, bounded), so the same
file, library or error said twice, in two sessions or in a fragment, is one node. Every
entity and relation is counted by the memory ids it was seen in (``obs_<seq>`` for an
event's observation, a fragment's id for a fragment): the store records each of them, so a
memory read again is never counted twice, and shows the most recent ``SOURCES_LIMIT``:
enough to trace a node back, never a list that grows with the log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

KINDS = ("file", "function", "concept", "error", "decision", "library")
RELATIONS = ("modifies", "uses", "imports", "causes", "fixes", "depends_on", "related_to")
SYMMETRIC = frozenset({"related_to"})

SOURCES_LIMIT = 20
NAME_LIMIT = 200
KEY_LIMIT = 200

# Query bounds: what one request may ask of the graph, whatever its size.
MAX_LIMIT = 200
MAX_OFFSET = 10_000
MAX_DEPTH = 3
NEIGHBOURS_PER_NODE = 50  # strongest edges followed out of each node of a walk
NODES_PER_HOP = 200  # new nodes one hop of a walk may reach
MATCH_CAP = 2_000  # name matches considered before ranking
EDGE_CAP = 1_000  # edges returned among the nodes of one answer

Ref = tuple[str, str]  # (kind, key)

_SPACE = re.compile(r"\s+")
_END = ".。;；!！"


def _bound(text: str, limit: int) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def entity_key(name: str) -> str:
    """What makes two names the same entity: case, spacing and end punctuation aside."""
    return _SPACE.sub(" ", name.casefold()).strip().rstrip(_END).strip()[:KEY_LIMIT]


def node_id(kind: str, key: str) -> str:
    """A node's public id, ``kind:key``: stable across a reset and a rebuild."""
    return f"{kind}:{key}"


def parse_node_id(text: str) -> Ref | None:
    """The (kind, key) of a node id; the name after the kind may be written as shown
    (``function:UserRow``), since it is normalized as keys are."""
    kind, colon, name = text.partition(":")
    key = entity_key(name)
    return (kind, key) if colon and kind in KINDS and key else None


def bounded(sources: list[str], more: list[str]) -> list[str]:
    """``sources`` followed by ``more``, each id once at its latest place, the newest kept."""
    merged = dict.fromkeys(s for s in sources if s not in more)
    merged.update(dict.fromkeys(more))
    return list(merged)[-SOURCES_LIMIT:]


@dataclass(slots=True)
class Entity:
    kind: str
    key: str
    name: str
    first_seen: str
    last_seen: str
    sources: list[str] = field(default_factory=list)  # every distinct one, in order

    @property
    def ref(self) -> Ref:
        return (self.kind, self.key)

    @property
    def mentions(self) -> int:
        return len(self.sources)


@dataclass(slots=True)
class Relation:
    source: Ref
    target: Ref
    relation: str
    last_seen: str
    sources: list[str] = field(default_factory=list)  # every distinct one, in order

    @property
    def weight(self) -> int:
        return len(self.sources)


@dataclass(slots=True)
class GraphDelta:
    """Entities and relations found in some events or a fragment, ready to be merged into
    the stored graph. Adding the same entity or relation again only records another
    source, in the order things happened; every distinct source is kept (a delta covers
    one bounded batch), so the store can count each exactly once."""

    entities: dict[Ref, Entity] = field(default_factory=dict)
    relations: dict[tuple[Ref, Ref, str], Relation] = field(default_factory=dict)
    # Sources already recorded on each entity and relation: membership without a scan.
    _seen: set[tuple[object, str]] = field(default_factory=set, repr=False, compare=False)

    def __bool__(self) -> bool:
        return bool(self.entities)

    def add(
        self, kind: str, name: str, *, source: str, at: str, key: str | None = None
    ) -> Ref | None:
        """Record a mention of an entity; its ref, or None when the name is empty.

        The key is the normalized name, or of ``key`` when what makes two mentions the
        same is not the whole name (an error message with a different line number)."""
        if kind not in KINDS:
            raise ValueError(f"unknown entity kind {kind!r}")
        name = _bound(name, NAME_LIMIT)
        key = entity_key(name if key is None else key)
        if not key:
            return None
        entity = self.entities.get((kind, key))
        if entity is None:
            entity = self.entities[(kind, key)] = Entity(kind, key, name, at, at)
        entity.first_seen = min(entity.first_seen, at)
        entity.last_seen = max(entity.last_seen, at)
        if ((kind, key), source) not in self._seen:
            self._seen.add(((kind, key), source))
            entity.sources.append(source)
        return entity.ref

    def relate(self, source: Ref, target: Ref, relation: str, *, origin: str, at: str) -> None:
        """Record evidence (``origin``, a memory id) that ``source`` stands in ``relation``
        to ``target``; a symmetric relation is kept one way round."""
        if relation not in RELATIONS:
            raise ValueError(f"unknown relation {relation!r}")
        if source == target or source not in self.entities or target not in self.entities:
            return
        if relation in SYMMETRIC and target < source:
            source, target = target, source
        identity = (source, target, relation)
        found = self.relations.get(identity)
        if found is None:
            found = self.relations[identity] = Relation(source, target, relation, at)
        found.last_seen = max(found.last_seen, at)
        if (identity, origin) not in self._seen:
            self._seen.add((identity, origin))
            found.sources.append(origin)

    def related(self, a: Ref, b: Ref, *, origin: str, ignoring: str | None = None) -> bool:
        """Whether ``origin`` showed a relation (other than ``ignoring``) joining ``a`` and
        ``b``, either way. Only that memory's own relations count, so what one memory adds
        never depends on what others read before it did."""
        return any(
            ((x, y, r), origin) in self._seen
            for x, y in ((a, b), (b, a))
            for r in RELATIONS
            if r != ignoring
        )

    def include(self, entity: Entity) -> None:
        """Take in an entity as another delta holds it, with every source it records."""
        ref = entity.ref
        mine = self.entities.get(ref)
        if mine is None:
            mine = self.entities[ref] = Entity(
                entity.kind, entity.key, entity.name, entity.first_seen, entity.last_seen
            )
        mine.first_seen = min(mine.first_seen, entity.first_seen)
        mine.last_seen = max(mine.last_seen, entity.last_seen)
        for source in entity.sources:
            if (ref, source) not in self._seen:
                self._seen.add((ref, source))
                mine.sources.append(source)

    def of_kind(self, kind: str) -> list[Entity]:
        return [e for e in self.entities.values() if e.kind == kind]


@dataclass(frozen=True, slots=True)
class GraphNode:
    kind: str
    key: str
    name: str
    mentions: int  # distinct memories (observations, fragments) it was seen in
    first_seen: str
    last_seen: str
    sources: list[str]

    @property
    def id(self) -> str:
        return node_id(self.kind, self.key)

    def to_dict(self) -> dict[str, Any]:
        """agentmemory's node shape."""
        return {
            "id": self.id,
            "type": self.kind,
            "name": self.name,
            "properties": {
                "mentions": self.mentions,
                "firstSeen": self.first_seen,
                "lastSeen": self.last_seen,
            },
            "sourceObservationIds": self.sources,
            "createdAt": self.first_seen,
        }


@dataclass(frozen=True, slots=True)
class GraphEdge:
    source: str  # node ids
    target: str
    relation: str
    weight: int  # distinct memories that showed the relation
    last_seen: str
    sources: list[str]

    @property
    def id(self) -> str:
        return f"{self.source}|{self.target}|{self.relation}"

    def to_dict(self) -> dict[str, Any]:
        """agentmemory's edge shape."""
        return {
            "id": self.id,
            "type": self.relation,
            "sourceNodeId": self.source,
            "targetNodeId": self.target,
            "weight": self.weight,
            "sourceObservationIds": self.sources,
            "lastSeen": self.last_seen,
        }


@dataclass(frozen=True, slots=True)
class GraphSlice:
    """What one query returns: nodes in answer order and the edges among them."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]
    depth: int = 0
    truncated: bool = False  # a bound cut the answer short: more exists than was returned


@dataclass(frozen=True, slots=True)
class GraphStats:
    nodes_by_kind: dict[str, int]
    edges_by_relation: dict[str, int]

    @property
    def total_nodes(self) -> int:
        return sum(self.nodes_by_kind.values())

    @property
    def total_edges(self) -> int:
        return sum(self.edges_by_relation.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "totalNodes": self.total_nodes,
            "totalEdges": self.total_edges,
            "nodesByType": self.nodes_by_kind,
            "edgesByType": self.edges_by_relation,
        }
