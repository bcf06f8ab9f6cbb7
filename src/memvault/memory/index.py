"""The search index as the other parts use it: semantic search, the indexer that keeps the
index current, the searcher that reads it, and the background worker a server runs."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from memvault.background import Pacer
from memvault.config import Settings
from memvault.llm import LLM, CallPolicy, open_llm
from memvault.llm.translate import CALL_SECONDS, Translator
from memvault.search.engine import Searcher
from memvault.search.indexer import Backlog, Indexer
from memvault.search.lexicon import in_chinese
from memvault.search.ranking import Weights
from memvault.search.semantic import Semantic
from memvault.search.worker import IndexWorker
from memvault.store import Store

log = logging.getLogger(__name__)

VAULT_SCAN_SECONDS = 1.0


def weights_of(settings: Settings) -> Weights:
    s = settings
    return Weights(s.weight_relevance, s.weight_importance, s.weight_recency, s.recency_decay)


def _translator(settings: Settings) -> Translator | None:
    """Translations of search requests through the configured LLM (opened on the first
    request, on the translation thread); None when none is wanted."""
    if settings.llm == "none" or not settings.translate_requests:
        return None

    def open_for_requests() -> LLM | None:
        # One attempt, bounded: a translation that comes late is of no use to a search.
        return open_llm(settings, policy=CallPolicy(attempts=1), timeout=CALL_SECONDS)

    return Translator(open_for_requests, in_chinese)


class Index:
    """The index's parts, made of the settings: semantic search (None when off; its
    embedding model loads on first use, or when a server starts indexing, since loading
    takes seconds and a command that never searches by meaning never needs it), the
    indexer that keeps the index current, and the searcher that reads it."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        pacer: Pacer,
        *,
        refresh_board: Callable[[], bool],
        owns_vault: Callable[[], bool],
    ) -> None:
        self.settings = settings
        self.pacer = pacer
        semantic = None
        if settings.embeddings != "none":
            from memvault.embeddings import open_embedder

            embedder = open_embedder(settings)
            semantic = Semantic(store, embedder) if embedder is not None else None
        self.semantic = semantic
        vault = settings.vault_path
        self.indexer = Indexer(
            store,
            vault=vault,
            fragments=settings.fragments_path,
            sessions=vault / "memory" / "sessions",
            semantic=semantic,
            refresh_board=refresh_board,
            owns_vault=owns_vault,
        )
        self.searcher = Searcher(
            store,
            weights=weights_of(settings),
            semantic=semantic,
            translator=_translator(settings),
            translate_wait=settings.translate_wait_seconds,
        )
        self._worker: IndexWorker | None = None
        self._vault_scanned = float("-inf")

    @property
    def weights(self) -> Weights:
        return weights_of(self.settings)

    @property
    def running(self) -> bool:
        return self._worker is not None

    def start(self) -> None:
        """Keep the index current in the background (the server does this). The embedding
        model is loaded first: loading it (seconds of imports that hold the interpreter)
        beside live requests would stall them, so a server starts a little later instead."""
        if self._worker is None:
            self.warm()
            self._worker = IndexWorker(self.indexer, pacer=self.pacer)
            self._worker.start()

    def warm(self) -> bool:
        """Load the embedding model now; whether semantic search is ready."""
        if self.semantic is None:
            return False
        try:
            self.semantic.warm()
        except Exception:  # search stays lexical; the worker retries later
            log.warning("the embedding model could not be loaded", exc_info=True)
        return self.semantic.ready

    def stop(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def nudge(self, stored: int = 0) -> None:
        """Events were stored: the server's background work gives way for a while, and
        the index is woken to take them in."""
        self.pacer.event_arrived()
        self.wake()

    def wake(self) -> None:
        """What is indexed changed in place (observations an LLM rewrote): the index is
        woken to read it again. Unlike ``nudge``, no event arrived: background work does
        not give way."""
        if self._worker is not None:
            self._worker.nudge()

    def index_now(self, *, vectors: bool = True) -> int:
        """Bring the whole index up to date now (vault scan, observations, and vectors
        unless ``vectors`` is False); how many documents changed."""
        self._vault_scanned = time.monotonic()
        if vectors:
            return self.indexer.catch_up()
        done = self.indexer.scan_vault()
        while step := self.indexer.index_observations():
            done += step
        while step := self.indexer.index_changes():
            done += step
        return done

    def fresh(self) -> None:
        """Without a background worker (CLI, library use), index what is new first: new
        events always (cheap when there are none), the vault at most every
        ``VAULT_SCAN_SECONDS`` (a scan looks at every file)."""
        if self._worker is not None:
            return
        now = time.monotonic()
        if now - self._vault_scanned >= VAULT_SCAN_SECONDS:
            self.indexer.scan_vault()
            self._vault_scanned = time.monotonic()
        while self.indexer.index_observations():
            pass
        while self.indexer.index_changes():
            pass

    def backlog(self) -> Backlog:
        """What search cannot find yet."""
        return self.indexer.backlog()
