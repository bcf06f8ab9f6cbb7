"""Shaping extracted sentences into board- and fragment-sized pieces: clipped at a word,
closed with the right full stop, and compared so one thing said twice is kept once."""

from __future__ import annotations

import re

from memvault.analyzer import CJK_CHAR, similarity, tokens
from memvault.vault.snapshot import item_key

SAME_ITEM = 0.6  # lexical similarity above which two items say the same thing
# The least a statement worth a fragment holds. The shortest real ones in recorded sessions
# are "Use PKCE." (two words the analyzer keeps) and "API 命名统一用 fetch 前缀" (seven
# ideographs); "use)." and "改用" are what is left of a sentence cut in the wrong place.
MIN_WORDS = 2  # English: words the analyzer keeps (not stop words, not single letters)
MIN_IDEOGRAPHS = 4  # Chinese: ideographs, about two words
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"), ("（", "）"), ("「", "」"), ("【", "】"), ("“", "”"))
# A statement that stops at a word which needs another after it ("We decided to use"); "from
# now on" and "and so on" end where they stop.
_DANGLING = re.compile(
    r"(?:\b(?:a|an|the|to|of|for|with|and|or|but|in|(?<!now )(?<!so )on|at|by|from|into|than|"
    r"instead of|"
    r"rather than|use|using|is|are|be)|[用和與与或把將将為为])\W*$",
    re.IGNORECASE,
)

# Caution about nothing named ("I need to be careful here", "Keep that in mind"): a lesson
# only with what it points at, which a fragment does not carry.
_CAUTION_ONLY = re.compile(
    r"^(?:(?:i|we)(?: really)? (?:need to|should|must|have to|will) )?"
    r"(?:be (?:careful|cautious|mindful)|keep (?:that|this|it) in mind|watch out)"
    r"(?: (?:here|there|now|(?:with|about) (?:this|that|it)))?\W*$",
    re.IGNORECASE,
)


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a word boundary when there is one nearby."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,，;；:：") + "…"


def close(text: str, chinese: bool) -> str:
    """``text`` as a sentence that ends with a full stop in its own script."""
    text = text.strip()
    if not text or text.endswith((".", "。", "!", "！", "?", "？", "…")):
        return text
    return text + ("。" if chinese else ".")


def same(a: str, b: str) -> bool:
    return item_key(a) == item_key(b) or similarity(a, b) > SAME_ITEM


def substantive(text: str) -> bool:
    """Whether ``text`` says something a fragment can hold: enough real words (English) or
    ideographs (Chinese), not a caution about nothing named (``_CAUTION_ONLY``), brackets,
    quotes and code spans closed, and not stopping at a word that needs another after it."""
    text = text.strip()
    ideographs = len(CJK_CHAR.findall(text))
    latin = len(re.findall(r"[A-Za-z]{2,}", text))
    if ideographs and ideographs * 3 >= latin:
        enough = ideographs >= MIN_IDEOGRAPHS
    else:
        enough = latin >= MIN_WORDS and len(tokens(text)) >= MIN_WORDS
        enough = enough and not _CAUTION_ONLY.match(text)
    if not enough or _DANGLING.search(text):
        return False
    unclosed = text.count("`") % 2 or any(text.count(a) != text.count(b) for a, b in _PAIRS)
    return not unclosed


# A fenced block that holds at most this much is a quoted message ("For the code present,
# we get this error:" and the error in a fence): its words stay on the line. A longer one
# is code, and a line that tells of an event says "…" for it.
QUOTED_CHARS = 160
_FENCED = re.compile(r"```[^\n`]*\n?(.*?)(?:```|\Z)", re.DOTALL)
# Within a line, and possessive: a long run of spaces is read once, not once per split.
_TABLE_ROW = re.compile(r"^[ \t]*+\|.*\|[ \t]*+$", re.M)
_MARKUP = re.compile(
    r"^[ \t]{0,3}(?:#{1,6}[ \t]+|>[ \t]*)|\*\*|__"
    r"|^[ \t]*+\|?(?:[ \t]*+:?-{3,}:?[ \t]*+\|)+[ \t]*+$",
    re.M,
)


def plain_line(text: str) -> str:
    """``text`` (Markdown, as agents write it) as one plain line: a quoted message's words
    kept, longer code said as "…", headings, rules, quote marks and bold left out, table
    cells apart by spaces."""

    def fence(match: re.Match[str]) -> str:
        inside = match[1].strip()
        return f" {inside} " if len(inside) <= QUOTED_CHARS and "\n" not in inside else " … "

    text = _MARKUP.sub(" ", _FENCED.sub(fence, text))
    text = _TABLE_ROW.sub(lambda row: row[0].replace("|", " "), text)
    return re.sub(r"…(?:\s*…)+", "…", " ".join(text.split()))  # code after code: one "…"
