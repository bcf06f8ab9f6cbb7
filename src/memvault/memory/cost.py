"""Cost in view: the tokens memory blocks gave agents, per day, per project and per
session, over the last 30 days, and the cap each block is held to.

Every block given to a session is recorded in its log as a ``context_injected`` event
with the tokens it took (``memory/context.py``); this part counts them. It reads the log
once from 30 days back, then only what arrived since (a range of sequence numbers), and
answers from its tally, so ``/health``, ``memvault status`` and the viewer ask it as
often as they like.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from memvault.domain import iso, utc_now
from memvault.memory.reading import INJECTION_HOOK
from memvault.store import Store

DAYS = 30
SESSIONS_LISTED = 10
READ_CHUNK = 50_000  # sequence numbers read at a time, so one read never holds the store


@dataclass(frozen=True, slots=True)
class Spent:
    """Tokens given, and in how many blocks."""

    key: str  # a day (YYYY-MM-DD), a project or a session id
    tokens: int
    blocks: int


@dataclass(frozen=True, slots=True)
class CostReport:
    """Tokens memory gave agents over the last ``days`` days."""

    days: int
    cap: int  # the tokens one block may take (MEMVAULT_CONTEXT_TOKENS)
    tokens: int
    blocks: int
    today: int
    per_day: list[Spent]  # every day of the window, oldest first, empty ones too
    per_project: list[Spent]  # most tokens first
    per_session: list[Spent]  # the sessions given the most tokens, most first

    @property
    def per_block(self) -> float:
        return self.tokens / self.blocks if self.blocks else 0.0

    def to_dict(self) -> dict[str, Any]:
        def spent(items: list[Spent], name: str) -> list[dict[str, Any]]:
            return [{name: s.key, "tokens": s.tokens, "blocks": s.blocks} for s in items]

        return {
            "days": self.days,
            "capPerBlock": self.cap,
            "tokens": self.tokens,
            "blocks": self.blocks,
            "today": self.today,
            "perBlock": round(self.per_block, 1),
            "perDay": spent(self.per_day, "day"),
            "perProject": spent(self.per_project, "project"),
            "perSession": spent(self.per_session, "sessionId"),
        }


class Cost:
    """The tally of tokens injected, kept current from the event log."""

    def __init__(self, store: Store, cap: int, *, days: int = DAYS) -> None:
        self.store = store
        self.cap = cap
        self.days = days
        self._through: int | None = None  # the last sequence read
        # (day, project, session) → [tokens, blocks]
        self._tally: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
        self._lock = threading.Lock()

    def report(self, *, today: dt.date | None = None) -> CostReport:
        """Tokens per day, project and session over the last ``days`` days to ``today``."""
        today = today or utc_now().date()
        first = today - dt.timedelta(days=self.days - 1)
        with self._lock:
            self._read(first)
            rows = [
                (day, project, session, tokens, blocks)
                for (day, project, session), (tokens, blocks) in self._tally.items()
                if first.isoformat() <= day <= today.isoformat()
            ]
        days = [(first + dt.timedelta(days=n)).isoformat() for n in range(self.days)]
        return CostReport(
            days=self.days,
            cap=self.cap,
            tokens=sum(row[3] for row in rows),
            blocks=sum(row[4] for row in rows),
            today=sum(row[3] for row in rows if row[0] == today.isoformat()),
            per_day=_summed(rows, 0, order=days),
            per_project=_summed(rows, 1)[:SESSIONS_LISTED],
            per_session=_summed(rows, 2)[:SESSIONS_LISTED],
        )

    def _read(self, first: dt.date) -> None:
        """Take in the blocks recorded since the last read (from ``first`` the first
        time), and forget the days before ``first``."""
        newest = self.store.last_event_seq()
        if self._through is None:
            since = iso(dt.datetime.combine(first, dt.time(), tzinfo=dt.UTC))
            self._through = self.store.first_seq_received_since(since) - 1
        while self._through < newest:
            upto = min(self._through + READ_CHUNK, newest)
            for event in self.store.events_of_hook(INJECTION_HOOK, self._through, upto):
                data = event.payload if isinstance(event.payload, dict) else {}
                tokens = data.get("tokens")
                if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
                    spent = self._tally[(event.received_at[:10], event.project, event.session_id)]
                    spent[0] += tokens
                    spent[1] += 1
            self._through = upto
        for key in [key for key in self._tally if key[0] < first.isoformat()]:
            del self._tally[key]


def _summed(
    rows: list[tuple[str, str, str, int, int]], by: int, *, order: list[str] | None = None
) -> list[Spent]:
    tokens: dict[str, int] = defaultdict(int)
    blocks: dict[str, int] = defaultdict(int)
    for row in rows:
        tokens[row[by]] += row[3]
        blocks[row[by]] += row[4]
    if order is not None:
        return [Spent(key, tokens.get(key, 0), blocks.get(key, 0)) for key in order]
    ranked = sorted(tokens, key=lambda key: (-tokens[key], key))
    return [Spent(key, tokens[key], blocks[key]) for key in ranked]
