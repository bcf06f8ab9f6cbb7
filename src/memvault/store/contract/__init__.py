"""The store contract, in the parts it has (one module each).

Each part is one concern of the store a caller may need alone (the pipeline worker needs the
job queue, search needs the index). ``Store`` is all of them: what an engine implements and
what ``tests/store`` checks. The index is asked with a ``LexicalQuery``, plain values; only an
engine turns it into its own syntax (FTS5 in ``store.sqlite.fts5``).
"""

from __future__ import annotations

from memvault.store.contract.base import StoreBase
from memvault.store.contract.board import BoardMirror, VaultWrite, VaultWrites
from memvault.store.contract.derived import Derived
from memvault.store.contract.graph import Graph
from memvault.store.contract.index import FIELDS, OWN_TEXT, LexicalQuery, SearchIndex
from memvault.store.contract.jobs import JobQueue
from memvault.store.contract.log import AppendOutcome, EventLog
from memvault.store.contract.sessions import Sessions

__all__ = [
    "FIELDS",
    "OWN_TEXT",
    "PARTS",
    "AppendOutcome",
    "BoardMirror",
    "Derived",
    "EventLog",
    "Graph",
    "JobQueue",
    "LexicalQuery",
    "SearchIndex",
    "Sessions",
    "Store",
    "StoreBase",
    "VaultWrite",
    "VaultWrites",
]


class Store(
    StoreBase,
    EventLog,
    Sessions,
    BoardMirror,
    VaultWrites,
    JobQueue,
    Derived,
    Graph,
    SearchIndex,
):
    """The whole contract: every part, in one engine."""


PARTS = (
    StoreBase,
    EventLog,
    Sessions,
    BoardMirror,
    VaultWrites,
    JobQueue,
    Derived,
    Graph,
    SearchIndex,
)
