"""Semantic search: the embedder, and the vectors of every indexed document in memory.

Vectors live in the store (one per document, tagged with the embedder that made them) and
are loaded into one in-memory index per document kind when search starts, so a search
never waits for a database extension or a disk scan. The embedding worker adds vectors
as documents change; a query costs one embedding (cached) and a matrix product.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from memvault.background import lower_this_threads_priority
from memvault.domain import DOCUMENT_KINDS
from memvault.search.vectors import VectorIndex, to_blob
from memvault.store import Store

if TYPE_CHECKING:
    from memvault.embeddings import Embedder

log = logging.getLogger(__name__)


class Semantic:
    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._indexes: dict[str, VectorIndex] | None = None
        self._kinds: dict[int, str] = {}
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._warming: threading.Thread | None = None
        self._embed_query = functools.lru_cache(maxsize=256)(self._embed_one)
        self.failure: str | None = None  # why the model last failed to embed, if it did

    @property
    def model(self) -> str:
        return self.embedder.name

    @property
    def cursor_name(self) -> str:
        return f"vectors:{self.model}"

    def _loaded(self) -> dict[str, VectorIndex]:
        with self._lock:
            if self._indexes is None:
                dim = self.embedder.dim
                by_kind: dict[str, tuple[list[int], list[bytes]]] = {
                    kind: ([], []) for kind in DOCUMENT_KINDS
                }
                for doc_id, kind, blob in self.store.vectors(self.model):
                    by_kind[kind][0].append(doc_id)
                    by_kind[kind][1].append(blob)
                    self._kinds[doc_id] = kind
                indexes = {kind: VectorIndex(dim) for kind in DOCUMENT_KINDS}
                for kind, (ids, blobs) in by_kind.items():
                    if ids:
                        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(-1, dim)
                        indexes[kind].upsert(ids, matrix)
                self._indexes = indexes
            return self._indexes

    @property
    def ready(self) -> bool:
        """Whether the model answered once: until then a search does not wait for it to
        load (seconds, for a local model) and is lexical only."""
        return self._ready.is_set()

    def warm(self, *, wait: bool = True) -> None:
        """Load the model (in the background unless ``wait``)."""
        if self._ready.is_set():
            return
        if wait:
            self.embed(["warm up"])
            return
        with self._lock:
            if self._warming is None or not self._warming.is_alive():
                self._warming = threading.Thread(
                    target=self._warm_quietly, name="memvault-embedder", daemon=True
                )
                self._warming.start()

    def _warm_quietly(self) -> None:
        lower_this_threads_priority()
        try:
            self.embed(["warm up"])
        except Exception:
            log.warning("the embedding model could not be loaded", exc_info=True)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        try:
            vectors = self.embedder.embed(list(texts))
        except Exception as exc:
            self.failure = f"{type(exc).__name__}: {exc}"
            raise
        self.failure = None
        self._ready.set()
        return vectors

    @property
    def dim(self) -> int | None:
        """The vectors' dimension, once the model answered (asking earlier would load it)."""
        return self.embedder.dim if self._ready.is_set() else None

    def pending(self) -> int:
        """Documents changed since the last ones embedded: the embedding backlog."""
        return self.store.documents_since(self.store.cursor(self.cursor_name))

    def _embed_one(self, text: str) -> np.ndarray:
        return self.embedder.embed([text])[0]

    def add(self, items: Sequence[tuple[int, str, np.ndarray]]) -> None:
        indexes = self._loaded()
        with self._lock:
            for doc_id, kind, vector in items:
                previous = self._kinds.get(doc_id)
                if previous is not None and previous != kind:
                    indexes[previous].remove([doc_id])
                indexes[kind].upsert([doc_id], vector[None, :])
                self._kinds[doc_id] = kind

    def vector(self, doc_id: int) -> np.ndarray | None:
        """The stored vector of a document, when it has one."""
        kind = self._kinds.get(doc_id)
        return None if kind is None else self._loaded()[kind].get(doc_id)

    def query_vector(self, text: str) -> np.ndarray:
        return self._embed_query(text)

    def remove(self, ids: Iterable[int]) -> None:
        indexes = self._loaded()
        with self._lock:
            for doc_id in ids:
                kind = self._kinds.pop(doc_id, None)
                if kind is not None:
                    indexes[kind].remove([doc_id])

    def search(
        self,
        text: str,
        *,
        kinds: Sequence[str],
        limit: int,
        allowed: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        """(document id, cosine) best first across ``kinds``."""
        indexes = self._loaded()
        query = self._embed_query(text)
        found: list[tuple[int, float]] = []
        for kind in kinds:
            found += indexes[kind].search(query, limit, allowed)
        found.sort(key=lambda hit: hit[1], reverse=True)
        return found[:limit]

    def embed_pending(self, *, batch: int = 16) -> int:
        """Embed documents changed since the cursor; returns how many were embedded."""
        cursor = self.store.cursor(self.cursor_name)
        pending = self.store.documents_to_embed(cursor, limit=batch)
        if not pending:
            return 0
        vectors = self.embed([text for _, _, text in pending])
        self.store.write_vectors(
            self.model,
            [
                (doc_id, revision, to_blob(v))
                for (doc_id, revision, _), v in zip(pending, vectors, strict=True)
            ],
            cursor=(self.cursor_name, pending[-1][1]),
        )
        kinds = self.store.document_kinds([doc_id for doc_id, _, _ in pending])
        self.add(
            [
                (doc_id, kinds[doc_id], vector)
                for (doc_id, _, _), vector in zip(pending, vectors, strict=True)
                if doc_id in kinds
            ]
        )
        return len(pending)
