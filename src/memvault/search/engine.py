"""Search: lexical and semantic candidates, fused into one relevance, then ranked.

Lexical candidates come from the FTS5 index over analyzed terms (BM25); semantic ones
from the in-memory vectors. Each list's scores are normalised to 0–1 and combined into a
relevance; the ranking formula then weighs relevance against importance and recency, and
every hit carries all four numbers so a person can see why it came where it did.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from memvault.analyzer import tokens
from memvault.domain import DOCUMENT_KINDS, Document, utc_now
from memvault.llm.translate import Translator
from memvault.search.counts import Counts
from memvault.search.query import Query, parse
from memvault.search.ranking import Weights, by_part, fuse, idf, recency
from memvault.search.semantic import Semantic
from memvault.store import LEXICAL_PARTS, SESSION_PART, LexicalQuery, Store, part_of

log = logging.getLogger(__name__)
_RETRIEVERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="memvault-semantic")

CANDIDATES = 100  # per retriever, before fusion
COLUMN_WEIGHTS = (1.0, 1.0, 0.5, 0.5)  # title, body, context, dates
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
# In a large index, a query's common terms would make FTS5 read and score most of it. When
# some terms are rare (in at most RARE_DOCUMENTS documents, or RARE_SHARE of them), only
# those are searched: a common term adds little to BM25 and costs three times as much.
# When none is, the newest COMMON_WINDOW documents are searched. Small indexes are always
# searched whole, with every term. Measured: docs/benchmarks.md.
RARE_DOCUMENTS = 1000
RARE_SHARE = 0.01
COMMON_WINDOW = 5_000  # the newest documents a query of only common words searches
# A long request (a pasted log, a prompt of a page) is asked by the ASKED_TERMS of its rare
# terms that say most about it, by tf·idf, as Lucene's MoreLikeThis asks by a document's 25
# best: every further term adds documents to score for little change in the ranking. On the
# real coding sessions the longest Chinese request took 150 ms with its 300 pairs, 20 ms
# with 25, and recall of the relevant sessions held (docs/benchmarks.md).
ASKED_TERMS = 25
_WARN_EVERY = 60.0  # seconds between warnings that semantic search is unavailable
# The other language's words for a request's (search/lexicon.py) count this much of the
# request's own: a memory in the request's language that matches as well stays above.
ALTERNATIVE_WEIGHT = 0.5
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


def asked_terms(
    query: Query, terms: Sequence[str], counts: Mapping[str, int], total: int
) -> tuple[str, ...]:
    """The ``ASKED_TERMS`` of ``terms`` that weigh most in the request: how often it says
    each (tf) times its rarity in the index (idf), words before numbers (a pasted log's
    numbers are its timestamps, line numbers and durations: rare, and about nothing); a
    term no document holds is left out (it can match nothing). In the request's order."""
    said = query.said or Counter(tokens(query.text))

    def weight(term: str) -> tuple[bool, float]:
        return (not term.isdigit(), said[term] * idf(counts[term], total))

    held = [term for term in terms if counts.get(term, 0)]
    best = set(sorted(held, key=weight, reverse=True)[:ASKED_TERMS])
    return tuple(term for term in terms if term in best)


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
    ) -> list[Hit]:
        """The ``limit`` best hits among ``kinds``, ranked together."""
        kinds = [kind for kind in DOCUMENT_KINDS if kind in kinds]
        if not kinds or limit < 1:
            return []
        query = self._parsed(text, wait=self.translate_wait)
        pool = max(CANDIDATES, limit * 3)
        scope = _Scope(kinds, project, include_archived)
        lexical, semantic, documents = self._candidates(
            query, scope, dict.fromkeys(kinds, pool), keep=pool
        )
        hits = self._ranked(query, lexical, semantic, documents, scope, weights, now)
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
        query = self._parsed(text, wait=0.0)
        pools = {
            kind: max(CANDIDATES, quotas[kind] * 3)
            for kind in DOCUMENT_KINDS
            if quotas.get(kind, 0) > 0
        }
        if not pools:
            return Found(query, {})
        scope = _Scope(list(pools), project, include_archived)
        lexical, semantic, documents = self._candidates(query, scope, pools)
        hits = {}
        for kind in pools:
            ranked = self._ranked(
                query,
                _of_kind(lexical, documents, kind),
                _of_kind(semantic, documents, kind),
                documents,
                scope,
                weights,
                now,
            )
            hits[kind] = ranked[: quotas[kind]]
        return Found(query, hits)

    def _parsed(self, text: str, *, wait: float) -> Query:
        query = parse(text)
        if self.translator is None:
            return query
        return query.translated(self.translator.translation(text, wait=wait))

    def _candidates(
        self, query: Query, scope: _Scope, pools: dict[str, int], *, keep: int | None = None
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]], dict[int, Document]]:
        """Both retrievers' candidates, and their documents. ``pools``: how many of each
        kind, each kind found apart (a long request's words are in thousands of events,
        which would crowd a kind of a few hundred documents, fragments or board rows, out
        of one shared pool); ``keep``, when the kinds are ranked together: that many of
        each retriever, all kinds at once."""
        # The two retrievers run side by side: the model and SQLite both release the GIL.
        semantic_future = (
            _RETRIEVERS.submit(self._semantic, query.text, scope, pools)
            if self.semantic is not None
            else None
        )
        if keep is None:
            lexical = [
                hit
                for kind, pool in pools.items()
                for hit in self._lexical(query, replace(scope, kinds=[kind]), pool=pool)
            ]
        else:
            lexical = self._lexical(query, scope, pool=keep)
        total = keep or sum(pools.values())
        semantic = semantic_future.result()[:total] if semantic_future is not None else []
        documents = self.store.documents(list({doc_id: None for doc_id, _ in lexical + semantic}))
        gone = [doc_id for doc_id, _ in semantic if doc_id not in documents]
        if gone and self.semantic is not None:  # deleted, here or by another process
            self.semantic.remove(gone)
        return lexical, semantic, documents

    def _ranked(
        self,
        query: Query,
        lexical: list[tuple[int, float]],
        semantic: list[tuple[int, float]],
        documents: dict[int, Document],
        scope: _Scope,
        weights: Weights | None,
        now: datetime | None,
    ) -> list[Hit]:
        """Candidates fused into one relevance, weighed with importance and recency, best
        first; those outside ``scope`` left out."""
        fused, lexical_norm, cosine = fuse(lexical, semantic)
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

    def _lexical(self, query: Query, scope: _Scope, *, pool: int) -> list[tuple[int, float]]:
        """BM25 candidates, ``pool`` of each part of the index (``store.LEXICAL_PARTS``),
        as shares of their part's best (``ranking.by_part``): a session is scored among
        sessions, everything else among the rest, and the two scales differ."""
        found = {}
        for part in LEXICAL_PARTS:
            kinds = [kind for kind in scope.kinds if part_of(kind) == part]
            if kinds:
                found[part] = self._part_lexical(
                    query, replace(scope, kinds=kinds), pool=pool, part=part
                )
        return by_part(found)

    def _part_lexical(
        self, query: Query, scope: _Scope, *, pool: int, part: str
    ) -> list[tuple[int, float]]:
        """BM25 candidates in one part of the index: of the request's own words, and of its
        alternatives weighed by ALTERNATIVE_WEIGHT (BM25 is a sum over the words asked, so
        the two lists added are one BM25 in which an alternative counts less). Which words
        are asked is decided by that part's own counts, as its BM25 weighs them: a word in
        most events may be in few sessions."""
        own = self._own_lexical(query, scope, pool=pool, part=part)
        if not query.alternatives:
            return own
        scores = dict(own)
        for doc_id, score in self._alternative_lexical(query, scope, pool=pool, part=part):
            scores[doc_id] = scores.get(doc_id, 0.0) + ALTERNATIVE_WEIGHT * score
        return sorted(scores.items(), key=lambda item: item[1], reverse=True)[:pool]

    def _index_search(
        self, match: LexicalQuery, scope: _Scope, pool: int, newest: int | None = None
    ) -> list[tuple[int, float]]:
        """One ask of the lexical index, within ``scope``: ``pool`` best, of the ``newest``
        documents when given."""
        return self.store.lexical_search(
            match,
            kinds=scope.kinds,
            project=scope.project,
            include_archived=scope.include_archived,
            limit=pool,
            weights=COLUMN_WEIGHTS,
            newest=newest,
        )

    def _rare_cap(self, part: str | None = None) -> int:
        """How many documents (of ``part``, or of the whole index) a term may be in and
        still count as rare. Among sessions, a term held by half of them or more is not:
        BM25 gives it no weight there (its idf is floored), and reading where a whole
        session says it is the dearest read a search makes."""
        documents = self.counts.documents(part)
        cap = int(max(RARE_DOCUMENTS, RARE_SHARE * documents))
        return min(cap, (documents - 1) // 2) if part == SESSION_PART else cap

    def _alternative_lexical(
        self, query: Query, scope: _Scope, *, pool: int, part: str
    ) -> list[tuple[int, float]]:
        """As for the own words: in a large index, only the rare alternatives are asked,
        or, when all are common, the newest COMMON_WINDOW documents."""

        def run(match: LexicalQuery, newest: int | None = None) -> list[tuple[int, float]]:
            return self._index_search(match, scope, pool, newest)

        cap = self._rare_cap(part)
        if self.counts.documents(part) <= cap:
            return run(query.alternative_match())
        spelled = {" ".join(phrase): phrase for phrase in query.alternatives}
        counts = self.counts.terms(list(spelled), cap, part)
        rare = tuple(phrase for text, phrase in spelled.items() if counts[text] <= cap)
        if rare:
            return run(query.alternative_match(rare))
        return run(query.alternative_match(), COMMON_WINDOW)

    def _own_lexical(
        self, query: Query, scope: _Scope, *, pool: int, part: str
    ) -> list[tuple[int, float]]:
        if query.empty:
            return []

        def run(match: LexicalQuery, newest: int | None = None) -> list[tuple[int, float]]:
            return self._index_search(match, scope, pool, newest)

        if len(query.terms) < 2:
            return run(query.match())
        cap = self._rare_cap(part)
        counts = self.counts.terms(query.terms, cap, part)
        rare = tuple(term for term in query.terms if counts[term] <= cap)
        if len(rare) > ASKED_TERMS:
            rare = asked_terms(query, rare, counts, self.counts.documents(part))
        if len(rare) == len(query.terms):
            return run(query.match())
        if rare:
            return run(query.keeping(set(rare)).match())
        # Every term common: such a query cannot single much out, and scoring all that
        # matches it would cost a scan of the index. It searches the newest COMMON_WINDOW
        # documents, for all its terms together, else any of them.
        return run(query.match(anchor=query.terms, all_of=True), COMMON_WINDOW) or run(
            query.match(), COMMON_WINDOW
        )

    def term_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """How many documents of the whole index hold each term (counted up to the cap the
        search uses) and how many it holds, from the search's own counts: what a caller
        weighing a result's terms reads, whichever part the result is in."""
        return self.counts.terms(terms, self._rare_cap()), self.counts.documents()

    def _semantic(self, text: str, scope: _Scope, pools: dict[str, int]) -> list[tuple[int, float]]:
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

    def _embedding_failed(self, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._warned > _WARN_EVERY:
            self._warned = now
            log.warning("semantic search unavailable, searching lexically: %s", exc)


@dataclass(frozen=True, slots=True)
class _Scope:
    """Which documents a search may return."""

    kinds: list[str]
    project: str | None
    include_archived: bool

    def holds(self, document: Document) -> bool:
        return (
            document.kind in self.kinds
            and (self.project is None or document.project == self.project)
            and (self.include_archived or not document.archived)
        )


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
