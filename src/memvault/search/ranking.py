"""Ranking: how the retrievers' candidates make one relevance, and how relevance,
importance and recency make one score a person can read.

``score = w_relevance·relevance + w_importance·importance + w_recency·e^(−decay·days)``,
with relevance, importance and recency each from 0 to 1 and shown beside the score.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from memvault.domain import parse_timestamp

LEXICAL_SHARE = 0.5  # of relevance, when both retrievers answered
# A BM25 score under this holds no word that fewer than half its part's documents hold.
NO_RARE_WORD = 1e-3


@dataclass(frozen=True, slots=True)
class Weights:
    relevance: float = 0.5
    importance: float = 0.3
    recency: float = 0.2
    decay: float = 0.01  # per day

    def __post_init__(self) -> None:
        for name in ("relevance", "importance", "recency", "decay"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} weight must be a number ≥ 0, not {value}")
        if self.relevance + self.importance + self.recency <= 0:
            raise ValueError("at least one ranking weight must be above 0")

    def score(self, relevance: float, importance: float, recency: float) -> float:
        total = self.relevance + self.importance + self.recency
        return (
            self.relevance * relevance + self.importance * importance + self.recency * recency
        ) / total


RELEVANCE_ONLY = Weights(relevance=1.0, importance=0.0, recency=0.0)


def idf(count: int, total: int) -> float:
    """BM25's inverse document frequency of a term ``count`` of ``total`` documents hold:
    above 0, highest for a term no document holds."""
    count = min(count, total)
    return math.log(1 + (total - count + 0.5) / (count + 0.5))


def recency(updated_at: str, now: datetime, decay: float) -> float:
    """e^(−decay·days) since ``updated_at``; 1 for the future or an unreadable time."""
    then = parse_timestamp(updated_at)
    if then is None:
        return 1.0
    days = max((now - then).total_seconds() / 86400.0, 0.0)
    return math.exp(-decay * days)


def by_part(found: Mapping[str, Sequence[tuple[int, float]]]) -> list[tuple[int, float]]:
    """BM25 scores of each part of the index (``store.LEXICAL_PARTS``) as shares of that
    part's best, best first: a session is scored among sessions, an event among the rest,
    and the two scales differ, so the best session and the best of the rest both count 1.

    A part whose best holds no word rarer than half its documents (FTS5 floors such a
    word's idf at 1e-6, so the score is about nothing: a store of one session, a word
    every session says) is not its own scale: its scores are shares of the best of all,
    as in one index."""
    best = {part: max((score for _, score in hits), default=0.0) for part, hits in found.items()}
    top = max(best.values(), default=0.0)
    shares = []
    for part, hits in found.items():
        scale = best[part] if best[part] >= NO_RARE_WORD else top
        if scale > 0:
            shares += [(doc_id, score / scale) for doc_id, score in hits]
    return sorted(shares, key=lambda hit: hit[1], reverse=True)


def fuse(
    lexical: Sequence[tuple[int, float]],
    semantic: Sequence[tuple[int, float]],
    pending: Collection[int] = (),
) -> tuple[dict[int, float], dict[int, float], dict[int, float]]:
    """Relevance (0–1) per document from BM25 scores and cosines.

    BM25 is divided by the best score of this query; cosines are used as they are (a
    cosine is already comparable across queries). A document found by one retriever only
    gets that retriever's share: one that never gets a vector (a tool call) is weighed by
    its words alone. A document of ``pending`` will get a vector but has none yet (the
    embedder has not reached it): its likeness is not known, not nil, so it is weighed as
    a typical word candidate of this query is alike (the median cosine of the word
    candidates that have one). Counted as nil, every document the embedder had not reached
    ranked below those it had, and while a backlog was embedded search ranked worse than
    by words alone (docs/benchmarks.md).
    """
    top = max((score for _, score in lexical), default=0.0)
    lexical_norm = {doc_id: score / top for doc_id, score in lexical} if top > 0 else {}
    # Rows are stored as int8 codes: a cosine may come out a hair past 1.
    cosine = {doc_id: min(max(score, 0.0), 1.0) for doc_id, score in semantic}
    if not cosine:
        return dict(lexical_norm), lexical_norm, cosine
    if not lexical_norm:
        return dict(cosine), lexical_norm, cosine
    typical = 0.0
    if pending:
        alike = [cosine[doc_id] for doc_id in lexical_norm if doc_id in cosine]
        typical = statistics.median(alike or cosine.values())
    relevance = {}
    for doc_id in lexical_norm.keys() | cosine.keys():
        likeness = cosine.get(doc_id, typical if doc_id in pending else 0.0)
        relevance[doc_id] = (
            LEXICAL_SHARE * lexical_norm.get(doc_id, 0.0) + (1 - LEXICAL_SHARE) * likeness
        )
    return relevance, lexical_norm, cosine
