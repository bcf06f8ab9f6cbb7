"""When a newer decision replaces an older one: the rule the pipeline marks fragments
``[superseded]`` by.

It would rather miss a replaced decision than retire one that still holds, since a
retired decision is no longer given to agents. A newer decision supersedes an older one
only when all of these hold:

- both are decisions (tagged ``decision``) of the same project, and the newer one's day
  is later;
- the newer one is in force if the older one is: an agent's passing "instead of", said
  once and never confirmed (``derive.fragments.UNCONFIRMED``), is not told to agents, and
  it retires nothing the user said, nor an LLM's or a person's decision;
- they are about the same thing: most of the words of the shorter summary are in the
  other one (the words any decision has, "decided", "use", "we", left out, and the words
  that say one thing replaces another, "instead", "no longer", "改用": two decisions that
  each replace something are not about the same thing for that), and the files
  they were made over are mostly the same (both name none, and then the words must
  overlap more, or their ``files:`` share at least half);
- the newer one says something else: another number or version, a negation the other
  lacks, one choice swapped for another (``likeness.conflict``), or it says it replaces
  something (``instead of``, ``no longer``, ``switched to``, ``改用``, ``不再``…).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from memvault.analyzer import tokens
from memvault.derive import fragments
from memvault.vault.likeness import conflict

DECISION_TAG = "decision"
WORDS_WITH_FILES = 0.5  # share of the shorter summary's words the other holds
WORDS_WITHOUT_FILES = 0.6
FILES_SHARED = 0.5  # shared files over all the files either names
MIN_SHARED_WORDS = 2
# Words every decision has: they say it is a decision, not what it is about.
_DECISION_WORDS = frozenset(
    tokens(
        "decide decided decision decisions we will we'll let's lets use using go going with "
        "should must the a an to of in for on and from we're going 决定 決定 决策 我们 我們 使用"
    )
)
# Saying one thing replaces another: what the newer decision must say, never what two
# decisions are about ("Use X instead." and "Y instead of Z" share only that).
_REPLACES = re.compile(
    r"\b(?:instead(?: of)?|no longer|not anymore|switch(?:ed|ing)? (?:to|from|over)|"
    r"replac(?:e|es|ed|ing)|rather than|moved? (?:away )?from|drop(?:ped|ping)?|"
    r"revert(?:ed|ing)?|supersed(?:e|es|ed|ing))\b|改用|改成|改为|改為|换成|換成|不再|取代|替换|替換|弃用|棄用",
    re.IGNORECASE,
)
# Saying it is a decision, in Chinese, where words run together with what follows.
_DECIDED = re.compile(r"(?:我们|我們|咱们|咱們)?(?:决定|決定|打算|确定|確定)")
_NUMBER = re.compile(r"\d")
_FILE_FACT = re.compile(r"^(?:files?)\s*[:：]\s*(?P<files>.+)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Decision:
    """A fragment as the rule reads it."""

    id: str
    project: str
    day: str  # YYYY-MM-DD
    summary: str
    facts: tuple[str, ...]
    tags: tuple[str, ...]
    confidence: float | None = None  # None: written by a person

    @property
    def in_force(self) -> bool:
        return fragments.confirmed(self.confidence)

    @property
    def files(self) -> frozenset[str]:
        return frozenset(files_in(self.facts))


def files_in(facts: Iterable[str]) -> list[str]:
    """The files a fragment's ``files:`` facts name: those its turn changed, as its tools
    recorded them or, in a session that recorded no edit, as its replies reported them."""
    found: list[str] = []
    for fact in facts:
        named = _FILE_FACT.match(fact.strip())
        if named:
            found += [f.strip().strip("`") for f in named["files"].split(",") if f.strip()]
    return list(dict.fromkeys(found))


def supersedes(newer: Decision, older: Decision) -> str | None:
    """Why ``newer`` replaces ``older`` (the contradiction found), or None when it does not."""
    if newer.id == older.id or DECISION_TAG not in newer.tags or DECISION_TAG not in older.tags:
        return None
    if newer.project.strip() != older.project.strip() or not _day(newer) > _day(older):
        return None
    if older.in_force and not newer.in_force:
        return None
    mine, theirs = _subject(newer.summary), _subject(older.summary)
    shared = mine & theirs
    if len(shared) < MIN_SHARED_WORDS or not mine or not theirs:
        return None
    overlap = len(shared) / min(len(mine), len(theirs))
    files, other_files = newer.files, older.files
    if files or other_files:
        if len(files & other_files) / len(files | other_files) < FILES_SHARED:
            return None
        if overlap < WORDS_WITH_FILES:
            return None
    elif overlap < WORDS_WITHOUT_FILES:
        return None
    why = conflict(newer.summary, list(newer.facts), older.summary, list(older.facts))
    if why == "numbers" and not (_NUMBER.search(newer.summary) and _NUMBER.search(older.summary)):
        why = None  # a number added (a detail), not one changed
    if why is not None:
        return why
    if _REPLACES.search(_normal(newer.summary)):
        return "replaces"
    return None


def superseded(newer: Decision, older: list[Decision]) -> list[str]:
    """The ids of the decisions of ``older`` that ``newer`` replaces."""
    return [decision.id for decision in older if supersedes(newer, decision) is not None]


def replaced_by(decision: Decision, others: list[Decision]) -> str | None:
    """The id of the newest of ``others`` that replaces ``decision``, if one does: a
    decision read after a later one that retires it is retired all the same."""
    later = [other for other in others if supersedes(other, decision) is not None]
    return max(later, key=lambda other: (_day(other), other.id)).id if later else None


def _day(decision: Decision) -> str:
    """A decision's day alone: the index keeps a fragment's date as a timestamp
    (``2025-05-29T00:00:00.000Z``), a draft as the day, and the same day is no later."""
    return decision.day[:10]


def _subject(summary: str) -> set[str]:
    said = _REPLACES.sub(" ", _DECIDED.sub(" ", _normal(summary)))
    return set(tokens(said)) - _DECISION_WORDS


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()
