"""Search: lexical and semantic candidates, fused into one relevance, then ranked.

Lexical candidates come from the store's index over analyzed terms (BM25, asked as
``search/lexical.py`` decides); semantic ones from the in-memory vectors. Each list's
scores are normalised to 0–1 and combined into a relevance; the ranking formula then
weighs relevance against importance and recency, and every hit carries all four numbers
so a person can see why it came where it did.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memvault.domain import DOCUMENT_KINDS, Document, utc_now
from memvault.llm.translate import Translator
from memvault.search.counts import Counts
from memvault.search.lexical import LexicalCandidates, Scope
from memvault.search.query import Query, parse
from memvault.search.ranking import Weights, fuse, recency
from memvault.search.semantic import Semantic
from memvault.store import Store

log = logging.getLogger(__name__)
_RETRIEVERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="memvault-semantic")

CANDIDATES = 100  # per retriever, before fusion
# Boosts, measured on LoCoMo (docs/benchmarks.md): a result whose speaker the query names.
# Lifting results of a session in which something matched well (SESSION_BOOST × that best
# score) gained nothing beyond noise when cross-validated, so it is off; the benchmark
# still sets it to measure it.
ACTOR_BOOST = 0.1
SESSION_BOOST = 0.0
# A session found whole stands for its events: below its document, at most SESSION_HITS of
# its own hits come before other sessions' (the rest follow), so a list names sessions
# rather than one session's many events. Measured: docs/benchmarks.md.
SESSION_HITS = 3
_WARN_EVERY = 60.0  # seconds between warnings that semantic search is unavailable
_MAX_FUSED = 1 + ACTOR_BOOST + SESSION_BOOST * (1 + ACTOR_BOOST)  # keeps relevance in 0–1


@dataclass(frozen=True, slots=True)
class Hit:
    document: Document
    score: float
    relevance: float
    importance: float
    recency: float
    lexical: float | None = None  # normalised BM25, when the text matched
    semantic: float | None = None  # cosine similarity, when vectors exist


@dataclass(frozen=True, slots=True)
class Found:
    """One search for several kinds of memory: the query as parsed (what the caller weighs
    the hits' words by, without parsing it again) and each kind's hits, best first."""

    query: Query
    hits: dict[str, list[Hit]]

    def __getitem__(self, kind: str) -> list[Hit]:
        return self.hits.get(kind, [])


class Searcher:
    def __init__(
        self,
        store: Store,
        *,
        weights: Weights,
        semantic: Semantic | None = None,
        translator: Translator | None = None,
        translate_wait: float = 0.0,
    ):
        self.store = store
        # A request's translation by the LLM, when one is configured: a search waits for
        # it up to ``translate_wait`` seconds; ``find`` (the hook's context) never waits.
        self.translator = translator
        self.translate_wait = translate_wait
        self.weights = weights
        self.semantic = semantic
        self.counts = Counts(store)
        self.lexical = LexicalCandidates(store, self.counts)
        self._warned = float("-inf")

    def search(
        self,
        text: str,
        *,
        limit: int = 10,
        project: str | None = None,
        kinds: Sequence[str] = DOCUMENT_KINDS,
        include_archived: bool = False,
        weights: Weights | None = None,
        now: datetime | None = None,
        admit: Callable[[Document], bool] | None = None,
    ) -> list[Hit]:
        """The ``limit`` best hits among ``kinds``, ranked together; with ``admit``, of the
        documents it admits (a session's bookkeeping is not among the candidates at all: it
        has no words in the index and no vector, ``documents.is_bookkeeping``)."""
        kinds = [kind for kind in DOCUMENT_KINDS if kind in kinds]
        if not kinds or limit < 1:
            return []
        query = self._parsed(text, wait=self.translate_wait, project=project)
        pool = max(CANDIDATES, limit * 3)
        scope = Scope(kinds, project, include_archived)
        lexical, semantic, documents, pending = self._candidates(
            query, scope, dict.fromkeys(kinds, pool), keep=pool
        )
        hits = self._ranked(query, lexical, semantic, documents, pending, scope, weights, now)
        if admit is not None:
            hits = [hit for hit in hits if admit(hit.document)]
        return below_sessions(one_per_session(hits), SESSION_HITS)[:limit]

    def find(
        self,
        text: str,
        quotas: Mapping[str, int],
        *,
        project: str | None = None,
        include_archived: bool = False,
        weights: Weights | None = None,
        now: datetime | None = None,
    ) -> Found:
        """One search for several kinds at once (the query parsed once, one lexical and one
        semantic retrieval), each kind's hits cut to its quota. Each kind is ranked among
        its own, as a search of that kind alone would rank it (BM25 scaled by the kind's
        best); the lexical candidates of all kinds are as many as such searches' together.
        A translation of the request is used only when one was made before: this is the
        hook's path."""
        query = self._parsed(text, wait=0.0, project=project)
        pools = {
            kind: max(CANDIDATES, quotas[kind] * 3)
            for kind in DOCUMENT_KINDS
            if quotas.get(kind, 0) > 0
        }
        if not pools:
            return Found(query, {})
        scope = Scope(list(pools), project, include_archived)
        lexical, semantic, documents, pending = self._candidates(query, scope, pools)
        hits = {}
        for kind in pools:
            ranked = self._ranked(
                query,
                _of_kind(lexical, documents, kind),
                _of_kind(semantic, documents, kind),
                documents,
                pending,
                scope,
                weights,
                now,
            )
            hits[kind] = ranked[: quotas[kind]]
        return Found(query, hits)

    def _parsed(self, text: str, *, wait: float, project: str | None = None) -> Query:
        query = parse(text, project=project)
        if self.translator is None:
            return query
        return query.translated(self.translator.translation(text, wait=wait))

    def _candidates(
        self, query: Query, scope: Scope, pools: dict[str, int], *, keep: int | None = None
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]], dict[int, Document], set[int]]:
        """Both retrievers' candidates, their documents, and the word candidates whose
        vector is still to come (``ranking.fuse``). ``pools``: how many of each kind, each
        kind its own best (a long request's words are in thousands of events, which would
        crowd a kind of a few hundred documents, fragments or board rows, out of one shared
        pool), each part of the index asked once for all its kinds; ``keep``, when the kinds
        are ranked together: that many of each retriever, all kinds at once."""
        # The two retrievers run side by side: the model and SQLite both release the GIL.
        semantic_future = (
            _RETRIEVERS.submit(self._semantic, query.text, scope, pools)
            if self.semantic is not None
            else None
        )
        if keep is None:
            found = self.lexical.per_kind(query, scope, pools)
            lexical = [hit for kind in pools for hit in found[kind]]
        else:
            lexical = self.lexical.together(query, scope, pool=keep)
        total = keep or sum(pools.values())
        semantic = semantic_future.result()[:total] if semantic_future is not None else []
        if semantic:
            semantic += self._likeness(query.text, lexical, semantic)
        documents = self.store.documents(list({doc_id: None for doc_id, _ in lexical + semantic}))
        gone = [doc_id for doc_id, _ in semantic if doc_id not in documents]
        if gone and self.semantic is not None:  # deleted, here or by another process
            self.semantic.remove(gone)
        pending: set[int] = set()
        if semantic:
            alike = {doc_id for doc_id, _ in semantic}
            unlike = [doc_id for doc_id, _ in lexical if doc_id not in alike]
            pending = self.store.embeddable(unlike) if unlike else set()
        return lexical, semantic, documents, pending

    def _ranked(
        self,
        query: Query,
        lexical: list[tuple[int, float]],
        semantic: list[tuple[int, float]],
        documents: dict[int, Document],
        pending: set[int],
        scope: Scope,
        weights: Weights | None,
        now: datetime | None,
    ) -> list[Hit]:
        """Candidates fused into one relevance, weighed with importance and recency, best
        first; those outside ``scope`` left out. ``pending``: word candidates whose vector
        is still to come."""
        fused, lexical_norm, cosine = fuse(lexical, semantic, pending)
        relevance = boost(fused, documents, set(query.terms))
        weights = weights or self.weights
        now = now or utc_now()
        hits = []
        for doc_id, rel in relevance.items():
            document = documents.get(doc_id)
            if document is None or not scope.holds(document):
                continue
            fresh = recency(document.updated_at, now, weights.decay)
            hits.append(
                Hit(
                    document=document,
                    score=weights.score(rel, document.importance, fresh),
                    relevance=rel,
                    importance=document.importance,
                    recency=fresh,
                    lexical=lexical_norm.get(doc_id),
                    semantic=cosine.get(doc_id),
                )
            )
        hits.sort(key=lambda hit: (hit.score, hit.relevance), reverse=True)
        return hits

    def term_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """How many documents of the whole index hold each term (counted up to the cap the
        search uses) and how many it holds, from the search's own counts: what a caller
        weighing a result's terms reads, whichever part the result is in."""
        return self.counts.terms(terms, self.lexical.rare_cap()), self.counts.documents()

    def _semantic(self, text: str, scope: Scope, pools: dict[str, int]) -> list[tuple[int, float]]:
        if self.semantic is None or not text.strip():
            return []
        if not self.semantic.ready:
            self.semantic.warm(wait=False)
            return []
        allowed = None
        if scope.project is not None:
            ids = self.store.document_ids(
                kinds=scope.kinds, project=scope.project, include_archived=scope.include_archived
            )
            if not ids:
                return []
            allowed = np.asarray(ids, dtype=np.int64)
        try:
            return self.semantic.nearest(text, pools, allowed)
        except Exception as exc:  # an embedding endpoint down: search stays lexical
            self._embedding_failed(exc)
            return []

    def _likeness(
        self,
        text: str,
        lexical: list[tuple[int, float]],
        semantic: list[tuple[int, float]],
    ) -> list[tuple[int, float]]:
        """(document id, cosine) of the lexical candidates the semantic ones are not, of
        those that have a vector: each candidate weighed by both retrievers. Outside the
        nearest ``CANDIDATES`` a document counted as if it had no likeness at all, and a
        request close in meaning to a hundred other things (a build log pasted whole) lost
        the session its words named (docs/benchmarks.md)."""
        assert self.semantic is not None
        pooled = {doc_id for doc_id, _ in semantic}
        missing = [doc_id for doc_id, _ in lexical if doc_id not in pooled]
        try:
            return self.semantic.likeness(text, missing)
        except Exception as exc:  # an endpoint that answered just now may fail now
            self._embedding_failed(exc)
            return []

    def _embedding_failed(self, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._warned > _WARN_EVERY:
            self._warned = now
            log.warning("semantic search unavailable, searching lexically: %s", exc)


def one_per_session(hits: list[Hit]) -> list[Hit]:
    """Hits without a second result for one session: a session's own document and its
    board row's summary say the same session; the better placed one stays."""
    seen: set[str] = set()
    kept = []
    for hit in hits:
        document = hit.document
        if document.kind == "session":
            names = {f"host:{document.key}"}
            if document.meta.get("board"):
                names.add(f"board:{document.meta['board']}")
        elif document.kind == "summary":
            names = {f"board:{document.key}"}
        else:
            kept.append(hit)
            continue
        if names & seen:
            continue
        seen |= names
        kept.append(hit)
    return kept


def below_sessions(hits: list[Hit], most: int) -> list[Hit]:
    """``hits`` where, below a session's own document, at most ``most`` of that session's
    hits come before other sessions'; its others follow all of those, in their order. The
    hits of a session whose document is not above them keep their place."""
    whole: set[str] = set()
    counts: dict[str, int] = {}
    kept, later = [], []
    for hit in hits:
        document = hit.document
        session = document.session_id
        if document.kind == "session":
            whole.add(document.key)
        elif session in whole:
            counts[session] = counts.get(session, 0) + 1
            if counts[session] > most:
                later.append(hit)
                continue
        kept.append(hit)
    return kept + later


def _of_kind(
    candidates: list[tuple[int, float]], documents: dict[int, Document], kind: str
) -> list[tuple[int, float]]:
    return [
        (doc_id, score)
        for doc_id, score in candidates
        if (document := documents.get(doc_id)) is not None and document.kind == kind
    ]


def boost(
    fused: dict[int, float], documents: dict[int, Document], query_terms: set[str]
) -> dict[int, float]:
    """Relevance from fused scores: + ACTOR_BOOST when the query names the document's
    speaker, + SESSION_BOOST × the best score in its session among this query's candidates;
    scaled back into 0–1."""
    scores = {}
    for doc_id, score in fused.items():
        document = documents.get(doc_id)
        actor_terms = document.meta.get("actorTerms") if document else None
        if actor_terms and query_terms.intersection(actor_terms):
            score += ACTOR_BOOST
        scores[doc_id] = score
    best: dict[str, float] = {}
    for doc_id, score in scores.items():
        document = documents.get(doc_id)
        if document is not None and document.session_id:
            best[document.session_id] = max(best.get(document.session_id, 0.0), score)
    relevance = {}
    for doc_id, score in scores.items():
        document = documents.get(doc_id)
        session = document.session_id if document is not None else None
        lift = SESSION_BOOST * best[session] if session else 0.0
        relevance[doc_id] = min((score + lift) / _MAX_FUSED, 1.0)
    return relevance
