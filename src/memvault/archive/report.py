"""What an import did: counts per kind of record, and the problems met on the way."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

PROBLEMS_KEPT = 1000
OUTCOMES = ("new", "existing", "merged", "replaced", "skipped", "refused")


class At(NamedTuple):
    """Where a record came from: a line of a memvault archive, or an item of an
    agentmemory export (``memories[3]``)."""

    line: int | None = None
    item: str | None = None


NOWHERE = At()


@dataclass(slots=True)
class Counts:
    """How the records of one kind ended: written anew; already there, the same; merged
    into what was there; written over a different file (``replace``); left out (the
    reason is counted in the report); refused (a problem names it)."""

    new: int = 0
    existing: int = 0
    merged: int = 0
    replaced: int = 0
    skipped: int = 0
    refused: int = 0

    def to_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in OUTCOMES}


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str
    error: str
    line: int | None = None  # of a memvault archive
    item: str | None = None  # in an agentmemory export: ``memories[3]``

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"kind": self.kind, "error": self.error}
        if self.line is not None:
            found["line"] = self.line
        if self.item is not None:
            found["item"] = self.item
        return found


@dataclass(slots=True)
class ImportReport:
    source: str  # "memvault" | "agentmemory"
    version: str
    strategy: str
    counts: dict[str, Counts] = field(default_factory=dict)
    reasons: Counter[str] = field(default_factory=Counter)  # why records were skipped
    problems: list[Problem] = field(default_factory=list)
    problem_count: int = 0
    summaries_queued: int = 0
    complete: bool = True  # a memvault archive ended with its end record

    def of(self, kind: str) -> Counts:
        if kind not in self.counts:
            self.counts[kind] = Counts()
        return self.counts[kind]

    def count(self, kind: str, outcome: str, n: int = 1) -> None:
        counts = self.of(kind)
        setattr(counts, outcome, getattr(counts, outcome) + n)

    def skip(self, kind: str, reason: str, n: int = 1) -> None:
        self.count(kind, "skipped", n)
        self.reasons[f"{kind}: {reason}"] += n

    def refuse(self, kind: str, error: str, at: At = NOWHERE) -> None:
        self.count(kind, "refused")
        self.problem(kind, error, at)

    def problem(self, kind: str, error: str, at: At = NOWHERE) -> None:
        self.problem_count += 1
        if len(self.problems) < PROBLEMS_KEPT:
            self.problems.append(Problem(kind, error, at.line, at.item))

    def total(self, outcome: str) -> int:
        return sum(getattr(counts, outcome) for counts in self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "version": self.version,
            "strategy": self.strategy,
            "complete": self.complete,
            "counts": {kind: counts.to_dict() for kind, counts in self.counts.items()},
            "skipped": dict(self.reasons.most_common()),
            "summariesQueued": self.summaries_queued,
            "problemCount": self.problem_count,
            "problems": [p.to_dict() for p in self.problems],
        }
