"""The store contract, in the parts it has (one module each).

Each part is one concern of the store a caller may need alone (the pipeline worker needs the
job queue, search needs the index). ``Store`` is all of them: what an engine implements and
what ``tests/store`` checks. A part that every engine runs the same is written in its own
module once (the job queue), and an engine supplies only what differs. The index is asked
with a ``LexicalQuery``, plain values; only an engine turns it into its own syntax (FTS5 in
``store.sqlite.fts5``).
"""

from __future__ import annotations

from memvault.store.contract.base import StoreBase as StoreBase
from memvault.store.contract.board import BoardMirror as BoardMirror
from memvault.store.contract.board import VaultWrite as VaultWrite
from memvault.store.contract.board import VaultWrites as VaultWrites
from memvault.store.contract.derived import Derived as Derived
from memvault.store.contract.graph import Graph as Graph
from memvault.store.contract.index import FIELDS as FIELDS
from memvault.store.contract.index import LEXICAL_PARTS as LEXICAL_PARTS
from memvault.store.contract.index import OWN_TEXT as OWN_TEXT
from memvault.store.contract.index import REST_PART as REST_PART
from memvault.store.contract.index import SESSION_PART as SESSION_PART
from memvault.store.contract.index import KindStamp as KindStamp
from memvault.store.contract.index import LexicalQuery as LexicalQuery
from memvault.store.contract.index import SearchIndex as SearchIndex
from memvault.store.contract.index import part_of as part_of
from memvault.store.contract.jobs import JobQueue as JobQueue
from memvault.store.contract.log import AppendOutcome as AppendOutcome
from memvault.store.contract.log import EventLog as EventLog
from memvault.store.contract.purge import Place as Place
from memvault.store.contract.purge import Purge as Purge
from memvault.store.contract.purge import PurgeRecord as PurgeRecord
from memvault.store.contract.sessions import Sessions as Sessions

PARTS = (
    StoreBase,
    EventLog,
    Sessions,
    BoardMirror,
    VaultWrites,
    JobQueue,
    Graph,
    Derived,
    SearchIndex,
    Purge,
)


class Store(*PARTS):
    """The whole contract: every part, in one engine."""
