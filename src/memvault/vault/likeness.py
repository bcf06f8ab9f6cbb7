"""How alike two fragments read, and whether they state different things.

Fragments are compared as the analyzer reads them: the words of the summaries and
of the whole fragments, as sets, so case, spacing, punctuation and the order of a list do
not count. Two fragments that state different things are never alike enough to merge
however alike they read: other numbers or versions, a negation one of them lacks, or the
same sentence with another choice in it. What belongs to one occurrence rather than to
the statement (the time on a log line, the pid in a quoted error) is not compared.
"""

from __future__ import annotations

import math
import re
import unicodedata

from memvault.analyzer import kept, tokens

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
# When a log line was written (``2026-11-30T10:00:01Z``, ``10:00:01.123``), not what it says.
_CLOCK = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
)
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|without|cannot|can't|don't|doesn't|didn't|isn't|aren't|"
    r"wasn't|won't|shouldn't|mustn't|avoid)\b|[不沒没別别勿無无未非]",
    re.IGNORECASE,
)
# Words that say a statement replaces another ("… instead of Redis", "no longer …"): a
# fragment saying so states something else than one without them, however alike it reads.
REPLACES = re.compile(
    r"\b(?:instead of|no longer|rather than|switch(?:ed|ing)? (?:to|from|over)|"
    r"mov(?:e|ed|ing) (?:away )?from)\b|改用|不再|换成|換成|取代",
    re.IGNORECASE,
)
# Facts about where a fragment was learned (the pipeline's task and files), not what it says.
_CONTEXT_FACTS = frozenset({"task", "files"})
# A fact whose value is longer than this quotes a line (an error, a sentence): its numbers
# (a pid, a port in a stack trace, a duration) belong to one occurrence, not to a claim.
_DATA_POINT_WORDS = 6
_DATA_POINT_CHARS = 48
# Words that say how a statement is held or introduced, not which choice it makes: "We
# chose pgbouncer …" and "Use pgbouncer …" make the same choice.
_STANCE = frozenset(
    tokens(
        "use uses used using chose choose chosen decide decided decision pick picked prefer "
        "preferred adopt adopted go going switch switched stick keep always should must "
        "need needs will now let lets let's we our"
    )
)
CONFLICT_FACTOR = 0.5  # what is left of the likeness of two fragments that disagree
SUMMARY_WEIGHT = 0.7  # the summary says what a fragment is; its facts say the rest


def likeness(summary: str, facts: list[str], other_summary: str, other_facts: list[str]) -> float:
    """How alike two fragments read, from 0 to 1: the cosine of their summaries' word sets,
    weighted with that of their whole texts, so the same summary with a fact more or less
    stays above 0.8. Words are the analyzer's (stems, Chinese character pairs), taken
    once each: case, spacing, punctuation and the order of a list make no difference. Two
    fragments in ``conflict`` keep only a fraction of it."""
    summary_score = _cosine(_words(summary), _words(other_summary))
    whole_score = _cosine(
        _words(comparable(summary, facts)), _words(comparable(other_summary, other_facts))
    )
    score = SUMMARY_WEIGHT * summary_score + (1 - SUMMARY_WEIGHT) * whole_score
    if conflict(summary, facts, other_summary, other_facts):
        score *= CONFLICT_FACTOR
    return score


def conflict(
    summary: str, facts: list[str], other_summary: str, other_facts: list[str]
) -> str | None:
    """Why two fragments state different things however alike their words are, or None:
    their summaries hold other numbers (a version, a price, a size), one negates what the
    other says, a fact with the same name holds other numbers, or the summaries are one
    sentence with one choice swapped for another (``Store sessions in Redis`` /
    ``… in Postgres``: more words shared than changed on either side), or one says it
    replaces something (``… instead of Redis``) and the other does not."""
    if _numbers(summary) != _numbers(other_summary):
        return "numbers"
    if (
        len(_NEGATION.findall(_normal(summary))) % 2
        != len(_NEGATION.findall(_normal(other_summary))) % 2
    ):
        return "negation"
    if bool(REPLACES.search(_normal(summary))) != bool(REPLACES.search(_normal(other_summary))):
        return "replaces"
    mine, theirs = _fact_numbers(facts), _fact_numbers(other_facts)
    if any(mine[name] != theirs[name] for name in mine.keys() & theirs.keys()):
        return "fact numbers"
    left, right = _words(summary), _words(other_summary)
    only_left, only_right = left - right - _STANCE, right - left - _STANCE
    if only_left and only_right and len(left & right) >= max(len(only_left), len(only_right)):
        return "another choice"
    return None


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


@kept(texts=8192, chars=32 * 1024)
def _words(text: str) -> frozenset[str]:
    """A text's words, kept for the texts compared last: writing a fragment compares it
    with each of its project's, whose texts change far less often than they are read."""
    return frozenset(tokens(_CLOCK.sub(" ", _normal(text))))


def _cosine(left: frozenset[str], right: frozenset[str]) -> float:
    if not left or not right:
        return 1.0 if left == right else 0.0
    return len(left & right) / math.sqrt(len(left) * len(right))


def _numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(_CLOCK.sub(" ", _normal(text))))


def _fact_numbers(facts: list[str]) -> dict[str, set[str]]:
    """The numbers of each ``name: value`` data point that has some, by name (the task and
    the files a fragment was learned in are not what it says, and a quoted line is no data
    point)."""
    found: dict[str, set[str]] = {}
    for fact in facts:
        name, colon, value = _normal(fact).partition(":")
        numbers = _numbers(value) if colon and _is_data_point(value) else set()
        if numbers and name.strip() not in _CONTEXT_FACTS:
            found.setdefault(name.strip(), set()).update(numbers)
    return found


def _is_data_point(value: str) -> bool:
    """A short value (``3``, ``$20/month``, ``postgres 16``), not a quoted line."""
    value = value.strip()
    return len(value.split()) <= _DATA_POINT_WORDS and len(value) <= _DATA_POINT_CHARS


def comparable(summary: str, facts: list[str]) -> str:
    """A fragment's text as it is compared (and embedded): its summary, then its facts."""
    return "\n".join([summary, *facts])
