"""How many documents hold a term, and how many the index holds: what a search weighs a
request's words by when it decides which of them to ask. Counted per part of the index
(``store.LEXICAL_PARTS``: a word in most events may be in few sessions) or over all of
it, and reused for ``COUNT_TTL`` seconds: a count a minute old decides the same."""

from __future__ import annotations

import time
from collections.abc import Sequence

from memvault.store import LEXICAL_PARTS, Store

COUNT_TTL = 60.0  # seconds a document count or a term's count is reused
COUNT_CACHE = 100_000  # terms kept, over all parts


class Counts:
    def __init__(self, store: Store):
        self.store = store
        # Per part (None: the whole index): its document count, and each term's count
        # with when it was counted and up to which cap.
        self._documents: dict[str | None, tuple[float, int]] = {}
        self._terms: dict[tuple[str, str | None], tuple[float, int, int]] = {}

    def documents(self, part: str | None = None) -> int:
        """How many documents ``part`` holds (the whole index when None)."""
        at, count = self._documents.get(part, (float("-inf"), 0))
        now = time.monotonic()
        if now - at > COUNT_TTL:
            count = self.store.document_count(_parts(part))
            self._documents[part] = (now, count)
        return count

    def terms(self, terms: Sequence[str], cap: int, part: str | None = None) -> dict[str, int]:
        """How many documents of ``part`` hold each term, counted up to ``cap + 1``."""
        now = time.monotonic()
        cached = self._terms
        missing = [
            term
            for term in terms
            if (term, part) not in cached
            or now - cached[term, part][0] > COUNT_TTL
            or cached[term, part][2] != cap
        ]
        if missing:
            if len(cached) > COUNT_CACHE:
                cached.clear()
            counted = self.store.term_counts(missing, cap=cap, parts=_parts(part))
            for term, count in counted.items():
                cached[term, part] = (now, count, cap)
        return {term: cached[term, part][1] for term in terms}

    def clear(self) -> None:
        self._documents.clear()
        self._terms.clear()


def _parts(part: str | None) -> tuple[str, ...]:
    return LEXICAL_PARTS if part is None else (part,)
