"""What an engine hands the shared graph: its own statements where its SQL differs, and
the few steps it takes its own way (``sqlite.graph``, ``postgres.graph``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memvault.store.engine import _marked

if TYPE_CHECKING:
    from memvault.graph.model import Entity

NODE = "id, kind, key, name, mentions, first_seen, last_seen, sources"
EDGE = "src, dst, relation, weight, last_seen, sources"


class GraphDialect:
    """An engine's side of the graph: statements (with ``?`` marks, ``q`` makes them its
    own) and the steps its SQL takes differently."""

    mark = "?"
    NODE_BY_REF: str
    TOP_NODES: str
    NODES_OF_KIND: str
    KEYS_STARTING: str
    NAMES_CONTAINING: str
    EDGES_OUT: str
    EDGES_IN: str
    SESSIONS_BEHIND: str
    TABLES: tuple[str, ...]
    LEAST = "min"
    GREATEST = "max"
    FOR_UPDATE = ""

    def q(self, text: str) -> str:
        return text if self.mark == "?" else _marked(text, self.mark)

    def text(self, value: str) -> str:
        """A name or key as the engine can hold it."""
        return value

    def lock(self, conn) -> None:
        """Taken before every graph write (replicas take turns on PostgreSQL)."""

    def insert_node(self, conn, entity: Entity) -> int:
        raise NotImplementedError

    def added_sources(self, conn, table: str, key: tuple, sources: Sequence[str]) -> list[str]:
        """The sources not recorded yet for a node (``graph_node_sources``) or an edge
        (``graph_edge_sources``), in the delta's order, now recorded."""
        raise NotImplementedError

    def take_edge_members(self, conn, source: str) -> list[tuple]:
        """(src, dst, relation) of each edge ``source`` was seen in, its record deleted."""
        raise NotImplementedError

    def take_node_members(self, conn, source: str) -> list[int]:
        """Each node ``source`` was seen in, its record deleted."""
        raise NotImplementedError

    def drop_name(self, conn, node: int) -> None:
        """Forget a deleted node's name where the engine indexes names apart."""

    def name_needle(self, folded: str) -> str:
        """What ``NAMES_CONTAINING`` is asked for names holding ``folded``."""
        raise NotImplementedError

    def nodes_by_id(self, conn, ids: Sequence[int]) -> list[tuple]:
        raise NotImplementedError

    def edges_among(self, conn, ids: list[int], cap: int) -> list[tuple]:
        raise NotImplementedError
