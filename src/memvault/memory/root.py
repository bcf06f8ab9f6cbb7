"""Memory, the composition root: it opens the store, makes the parts and hands each what it
needs (nothing below calls back up into it), and closes them.

The parts: ``board`` (the session board), ``recall`` (search and get), ``context`` (memory
blocks for agents), ``fragments`` (remember, edit, delete, forget, maintain), ``reads``
(sessions, events, timelines), ``health``, ``serving`` (the server's threads), ``owner``
(replica vault writes), ``graph``, ``rebuild``, ``transfer`` (what export and import read
and restore), ``purge`` (a text replaced everywhere, and the audit), ``capture``
(observing events) and ``pipeline`` (opened on first use). A few one-line doors serve
library users: ``observe``, ``observe_many``, ``search``, ``get`` and ``remember``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Self

from memvault.background import Pacer
from memvault.config import Settings
from memvault.errors import MemvaultError
from memvault.ingest import Envelope, Redactor
from memvault.ingest.capture import BulkResult, Capture, ObserveResult
from memvault.memory.board import Board
from memvault.memory.context import Context
from memvault.memory.cost import Cost
from memvault.memory.fragments import Deleted, Fragments, Maintenance
from memvault.memory.graph import Graph
from memvault.memory.health import HealthCheck
from memvault.memory.index import Index
from memvault.memory.owner import VaultWrites
from memvault.memory.pipeline import LazyPipeline
from memvault.memory.purge import Purges
from memvault.memory.reading import IngestRate
from memvault.memory.reads import Reads
from memvault.memory.rebuild import Rebuild
from memvault.memory.recall import Entry, Recall
from memvault.memory.serving import Serving
from memvault.memory.staleness import Staleness
from memvault.memory.transfer import Transfer
from memvault.pipeline.service import Pipeline, Sources
from memvault.search.engine import Hit
from memvault.store import Store, open_store
from memvault.vault.remember import DerivedFragment, Draft, Remembered


class Memory(AbstractContextManager["Memory"]):
    """An open memvault: a store, a vault folder and the settings that located them, and
    the parts made of them."""

    def __init__(self, settings: Settings, store: Store) -> None:
        self.settings = settings
        self.store = store
        # Shared by the server's background threads: they give way while events arrive.
        self.pacer = Pacer()
        self.owner = VaultWrites(settings, store)
        self.board = Board(settings, store, self.owner)
        self.index = Index(
            settings,
            store,
            self.pacer,
            refresh_board=self.board.sync,
            owns_vault=self.owner.is_owner,
        )
        self.recall = Recall(settings, store, self.index)
        # The server's own secrets are redacted from every event like any other secret.
        redactor = Redactor(
            {
                "memvault_secret": settings.secret_value(),
                "llm_api_key": settings.llm_api_key and settings.llm_api_key.get_secret_value(),
                "embedding_api_key": settings.embedding_api_key
                and settings.embedding_api_key.get_secret_value(),
            }
        )
        self.context = Context(settings, store, self.index, self.recall, self.board, redactor)
        self.fragments = Fragments(settings, store, self.index, self.recall, self.owner)
        self.staleness = Staleness(store, settings.fragments_dir, self.context.files)
        self.cost = Cost(store, settings.context_tokens)
        self.owner.route(
            {**self.board.vault_writes(), **self.fragments.vault_writes()},
            results=(Deleted, Maintenance, DerivedFragment),
        )
        sources = Sources(
            store,
            settings,
            remember_derived=self.fragments.remember_derived,
            update_derived=self.board.update_derived,
            board_row=self.board.row,
            graph_fragment=self.fragments.graph_fragment,
            supersede=self.fragments.supersede,
            rewritten=self.index.wake,
        )
        self._pipeline = LazyPipeline(sources, self.pacer)
        ingest_rate = IngestRate()
        self.reads = Reads(store, self.board.vault_board, ingest_rate)
        self.transfer = Transfer(store)
        self.purge = Purges(settings, store, self.index, self.owner)

        def stored(count: int) -> None:
            ingest_rate.add(count)
            self.index.nudge()

        self.capture = Capture(
            store,
            redactor,
            on_stored=stored,
            on_turn_end=self._pipeline.turn_ended,
            on_compacted=self.context.compacted,
        )
        self.health = HealthCheck(
            settings, store, self.index, self.owner.claim, self._pipeline, cost=self.cost
        )
        self.graph = Graph(store, self._pipeline)
        self.rebuild = Rebuild(settings, store, self.index, sources)
        self.serving = Serving(
            settings,
            self.pacer,
            self.owner.claim,
            self.index,
            self._pipeline,
            sync_board=self.board.sync,
            observe_many=self.capture.observe_many,
            on_new_session=self.board.session_seen,
        )
        self.owner.watch(self.serving.gained_vault, self.serving.lost_vault)

    @classmethod
    def open(cls, settings: Settings | None = None, **overrides: Any) -> Self:
        """Open (creating if needed) the memory at ``settings.home``.

        ``Memory.open(home="/tmp/x")`` overrides single settings; with no arguments the
        environment decides.
        """
        if settings is None:
            settings = Settings(**overrides)
        elif overrides:
            settings = settings.model_copy(update=overrides)
        if settings.vault is not None and not settings.vault.is_dir():
            raise MemvaultError(
                f"MEMVAULT_VAULT is {settings.vault}, which is not a folder: point it at an "
                "existing Obsidian vault, or unset it to use $MEMVAULT_HOME/vault"
            )
        settings.home.mkdir(parents=True, exist_ok=True)
        store = open_store(
            settings.store_url,
            synchronous=settings.sqlite_synchronous,
            lock_wait=settings.lock_wait_seconds,
            pool_size=settings.postgres_pool_size,
        )
        return cls(settings, store)

    @property
    def pipeline(self) -> Pipeline:
        """The pipeline, opened on first use (it opens the configured LLM)."""
        return self._pipeline.get()

    def close(self) -> None:
        self.serving.stop()
        self.owner.claim.stop()
        self._pipeline.close()
        self.store.close()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- doors for library use ------------------------------------------------------------

    def observe(self, envelope: Envelope | Mapping[str, Any]) -> ObserveResult:
        return self.capture.observe(envelope)

    def observe_many(self, envelopes: Iterable[Envelope | Mapping[str, Any]]) -> BulkResult:
        return self.capture.observe_many(envelopes)

    def search(self, query: str, **options: Any) -> list[Hit]:
        return self.recall.search(query, **options)

    def get(self, memory_id: str, *, counted: bool = True) -> Entry | None:
        return self.recall.get(memory_id, counted=counted)

    def remember(self, draft: Draft, *, threshold: float | None = None) -> Remembered:
        return self.fragments.remember(draft, threshold=threshold)
