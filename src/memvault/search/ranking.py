"""Ranking: how relevance, importance and recency make one score a person can read.

``score = w_relevance·relevance + w_importance·importance + w_recency·e^(−decay·days)``,
with relevance, importance and recency each from 0 to 1 and shown beside the score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from memvault.domain import parse_timestamp


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
