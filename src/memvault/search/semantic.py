"""Semantic search: the embedder, and the vectors of every indexed document in memory.

Vectors live in the store (one per document, tagged with the embedder that made them) and
are loaded into one in-memory index per document kind when search starts, so a search
never waits for a database extension or a disk scan. The embedding worker adds vectors
as documents change; a query costs one embedding (cached) and a matrix product.

Several processes may embed into one store (replicas on PostgreSQL). Each follows the
others by the embedding cursor, which moves in the transaction that writes a batch's
vectors: ``follow`` reads it, and when it moved, takes in the documents changed up to it
(their vector, or the loss of a stale one). A document deleted elsewhere is dropped from
memory when a search meets it (ids are never reused, so it can only take a candidate's
place until then).
"""

from __future__ import annotations

import collections
import ctypes
import functools
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from memvault.background import lower_this_threads_priority
from memvault.domain import DOCUMENT_KINDS
from memvault.embeddings.window import QUERY_TOKENS, head
from memvault.search.vectors import VectorIndex, from_blob, to_blob
from memvault.store import Store

if TYPE_CHECKING:
    from memvault.embeddings import Embedder

log = logging.getLogger(__name__)

# The store keeps one vector per document, of the model that embedded it last: a model that
# comes back after another one finds its cursor at the end but many of its vectors replaced.
# So the store counts changes of model, each model notes the count it last claimed, and a
# model whose note is behind starts embedding from the beginning (cursors hold integers).
_SWITCHES = "vectors:model-changes"
_LOAD_BATCH = 4096  # vectors converted at a time when the index loads
_FOLLOW_BATCH = 4096  # documents read at a time when following other processes' vectors
# Documents embedded outside the backlog's order (a fragment compared with a draft before
# the background reached it), kept by their text: 1.5 KiB each at 384 dimensions.
DOCUMENT_CACHE = 2048


def _return_freed_memory() -> None:
    """Hand the memory of the blobs loading let go back to the system. glibc keeps freed
    small blocks in the process (at 100,000 vectors, 150 MiB of RSS for nothing) unless
    asked; elsewhere there is nothing to ask."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.malloc_trim(0)


class Semantic:
    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._indexes: dict[str, VectorIndex] | None = None
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._warming: threading.Thread | None = None
        self._embed_query = functools.lru_cache(maxsize=256)(self._embed_one)
        self._embed_document = functools.lru_cache(maxsize=DOCUMENT_CACHE)(self._embed_text)
        self.failure: str | None = None  # why the model last failed to embed, if it did
        self._claimed = False
        self._generation = 0  # how many times this model started embedding anew
        self._followed = 0  # the embedding cursor the vectors in memory are complete to

    @property
    def model(self) -> str:
        return self.embedder.name

    @property
    def cursor_name(self) -> str:
        """The embedding cursor of this model: a new one each time the model embeds anew,
        since a cursor never moves back (replicas may still be writing behind it)."""
        if self._generation == 0:
            return f"vectors:{self.model}"  # the name the first embedding kept
        return f"vectors:{self.model}#{self._generation}"

    def _claim(self) -> None:
        """Make this model the store's: from the beginning when another embedded it since."""
        if self._claimed:
            return
        with self._lock:
            if self._claimed:
                return
            store, changes = self.store, self.store.cursor(_SWITCHES)
            note = f"vectors-claimed:{self.model}"
            generation = f"vectors-generation:{self.model}"
            claimed = store.cursor(note)
            self._generation = store.cursor(generation)
            if changes == 0 or claimed != changes:
                # A store from before the count has had one model (or its cursor is all
                # there is to go by): its cursor stands.
                if changes > 0 and store.cursor(self.cursor_name) > 0:
                    self._generation += 1  # a fresh cursor, at 0
                    store.write_vectors(self.model, [], cursor=(generation, self._generation))
                    log.info("embedding every document again with %s", self.model)
                changes += 1
                for name, value in ((_SWITCHES, changes), (note, changes)):
                    store.write_vectors(self.model, [], cursor=(name, value))
            self._claimed = True

    def _loaded(self) -> dict[str, VectorIndex]:
        self._claim()
        with self._lock:
            if self._indexes is None:
                # Read before the vectors: what commits in between is taken in twice.
                self._followed = self.store.cursor(self.cursor_name)
                self._indexes = self._load_vectors()
            return self._indexes

    def follow(self) -> int:
        """Take in the vectors other processes wrote (and drop those their rewrites made
        stale) since the last look; how many documents changed. When nothing did, it costs
        one read of the embedding cursor. Before the vectors are loaded there is nothing to
        follow: loading reads them all."""
        if self._indexes is None:
            return 0
        through = self.store.cursor(self.cursor_name)
        after = self._followed
        if through == after:
            return 0
        if through < after:  # embedding started again from the beginning: load anew
            with self._lock:
                self._indexes = None
            return 0
        taken = 0
        while True:
            changes = self.store.vector_changes(self.model, after, through, limit=_FOLLOW_BATCH)
            self._take(changes)
            taken += len(changes)
            if len(changes) < _FOLLOW_BATCH:
                break
            after = changes[-1][2]
        self._followed = max(self._followed, through)
        return taken

    def _take(self, changes: Sequence[tuple[int, str, int, bytes | None]]) -> None:
        indexes = self._indexes
        if indexes is None or not changes:
            return
        dim = self.embedder.dim
        stale = [doc_id for doc_id, _, _, blob in changes if blob is None]
        fresh: dict[str, tuple[list[int], list[np.ndarray]]] = {}
        for doc_id, kind, _, blob in changes:
            if blob is not None and kind in indexes and len(blob) == dim * 4:
                ids, vectors = fresh.setdefault(kind, ([], []))
                ids.append(doc_id)
                vectors.append(from_blob(blob, dim))
        with self._lock:
            for index in indexes.values():
                index.remove(stale)
            for kind, (ids, vectors) in fresh.items():
                for other, index in indexes.items():
                    if other != kind:  # a document that changed kind
                        index.remove(ids)
                indexes[kind].upsert(ids, np.stack(vectors))

    def _load_vectors(self) -> dict[str, VectorIndex]:
        """Every stored vector of this model into one index per kind, a batch at a time:
        each blob is let go once copied, so loading 100,000 vectors never holds them twice."""
        dim = self.embedder.dim
        rows: list = self.store.vectors(self.model)
        counts = collections.Counter(kind for _, kind, _ in rows)
        indexes = {kind: VectorIndex(dim, capacity=counts[kind]) for kind in DOCUMENT_KINDS}
        batches: dict[str, tuple[list[int], list[bytes]]] = {k: ([], []) for k in DOCUMENT_KINDS}

        def flush(kind: str) -> None:
            ids, blobs = batches[kind]
            if ids:
                matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(-1, dim)
                indexes[kind].upsert(ids, matrix)
                ids.clear()
                blobs.clear()

        for i in range(len(rows)):
            doc_id, kind, blob = rows[i]
            rows[i] = None
            batches[kind][0].append(doc_id)
            batches[kind][1].append(blob)
            if len(batches[kind][0]) == _LOAD_BATCH:
                flush(kind)
        for kind in DOCUMENT_KINDS:
            flush(kind)
        del rows
        _return_freed_memory()
        return indexes

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
        self._claim()
        return self.store.documents_since(self.store.cursor(self.cursor_name))

    def _embed_one(self, text: str) -> np.ndarray:
        return self.embedder.embed_query(text)

    def _embed_text(self, text: str) -> np.ndarray:
        return self.embedder.embed([text])[0]

    def add(self, items: Sequence[tuple[int, str, np.ndarray]]) -> None:
        indexes = self._loaded()
        with self._lock:
            for doc_id, kind, vector in items:
                for other, index in indexes.items():
                    if other != kind and doc_id in index:  # the document changed kind
                        index.remove([doc_id])
                indexes[kind].upsert([doc_id], vector[None, :])

    def vector(self, doc_id: int) -> np.ndarray | None:
        """The stored vector of a document, when it has one."""
        for index in self._loaded().values():
            if (found := index.get(doc_id)) is not None:
                return found
        return None

    def query_vector(self, text: str) -> np.ndarray:
        """``text`` embedded as a search query (cached): its head, about QUERY_TOKENS
        tokens, so a long request costs what a short one does (the cache is keyed by the
        head, too)."""
        return self._embed_query(head(text, QUERY_TOKENS))

    def document_vector(self, text: str) -> np.ndarray:
        """``text`` embedded as a document (cached): to compare with stored vectors as one
        document with another (dedup), where a query prefix would skew the score. Its head,
        as a stored document's vector reads."""
        return self._embed_document(head(text))

    def remove(self, ids: Iterable[int]) -> None:
        indexes = self._loaded()
        ids = list(ids)
        with self._lock:
            for index in indexes.values():
                index.remove(ids)

    def search(
        self,
        text: str,
        *,
        kinds: Sequence[str],
        limit: int,
        allowed: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        """(document id, cosine) best first across ``kinds``."""
        return self.nearest(text, dict.fromkeys(kinds, limit), allowed)[:limit]

    def nearest(
        self, text: str, quotas: Mapping[str, int], allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """(document id, cosine) best first: each kind's best, as many as its quota; the
        query is embedded once for all of them."""
        indexes = self._loaded()
        query = self.query_vector(text)
        found: list[tuple[int, float]] = []
        for kind, quota in quotas.items():
            found += indexes[kind].search(query, quota, allowed)
        found.sort(key=lambda hit: hit[1], reverse=True)
        return found

    def likeness(self, text: str, ids: Sequence[int]) -> list[tuple[int, float]]:
        """(document id, cosine with ``text`` as a query) of those of ``ids`` that have a
        vector, whatever their rank among all: candidates another retriever found."""
        if not ids:
            return []
        query = self.query_vector(text)
        found: list[tuple[int, float]] = []
        for index in self._loaded().values():
            found += index.similarities(query, ids)
        return found

    def embed_pending(self, *, batch: int = 16) -> int:
        """Embed documents changed since the cursor; returns how many were embedded."""
        self._claim()
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
