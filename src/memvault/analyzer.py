"""One analyzer for every language memvault meets, applied the same way to what is stored
and to what is asked.

Latin-script text is split into words, lower-cased, stripped of English stopwords and
stemmed (Snowball). Chinese, Japanese and Korean have no spaces between words, so runs of
those scripts become overlapping character pairs (``記憶體`` → ``記憶``, ``憶體``); a run of
one character stays as itself. A two-character query therefore matches exactly the texts
that contain it, which word-based tokenizers (and SQLite's unicode61 and trigram) miss.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import Stemmer

_CJK = (
    r"\u3040-\u30ff"  # hiragana, katakana
    r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    r"\uac00-\ud7af"  # hangul syllables
    r"\U00020000-\U0003134f"  # CJK extension ideographs B to G
)
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)?", re.UNICODE)
CJK_CHAR = re.compile(rf"[{_CJK}]")  # one Chinese, Japanese or Korean character
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

CHARS_PER_TOKEN = 4

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)

_stemmer = Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The stem the index holds for one lower-case word (as the analyzer makes it)."""
    return _stem(word)


def _stem(word: str) -> str:
    return _stemmer.stemWord(word)


# Texts whose terms are kept for the next time they are analyzed: a live session's prompts
# and replies are read again at each of its requests and each rebuild of its document, and
# analyzing a long one takes milliseconds. How long a kept one may be (the hook's limit for
# one string): at most tens of megabytes kept, a few usually.
KEPT_TEXTS = 1024
KEPT_CHARS = 8_000
A = TypeVar("A")


def kept(texts: int, chars: int) -> Callable[[Callable[[str], A]], Callable[[str], A]]:
    """A function of a text whose answers are kept for the last ``texts`` texts of at most
    ``chars`` characters; a longer text is worked out each time (keeping it would hold too
    much). The answer is shared: keep it immutable, or copy it. ``cache_clear`` forgets."""

    def keeping(function: Callable[[str], A]) -> Callable[[str], A]:
        cached = functools.lru_cache(maxsize=texts)(function)

        @functools.wraps(function)
        def answer(text: str) -> A:
            return cached(text) if len(text) <= chars else function(text)

        answer.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        return answer

    return keeping


@kept(KEPT_TEXTS, KEPT_CHARS)
def kept_tokens(text: str) -> tuple[str, ...]:
    """``tokens(text)``, kept when ``text`` is at most ``KEPT_CHARS`` long."""
    return tuple(tokens(text))


def tokens(text: str) -> list[str]:
    """The terms of ``text``, in order (repeats kept)."""
    normal = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    for match in _TOKEN.finditer(normal):
        piece = match.group(0)
        if CJK_CHAR.match(piece):
            if len(piece) == 1:
                out.append(piece)
            else:
                out.extend(piece[i : i + 2] for i in range(len(piece) - 1))
            continue
        word = piece.lower()
        # Single letters are noise, except names like C or R written as capitals.
        if word in STOPWORDS or (len(word) < 2 and not (word.isdigit() or piece.isupper())):
            continue
        out.append(_stem(word.replace("’", "'")))
        parts = _CAMEL.findall(piece) if piece.isascii() else []
        if len(parts) > 1:  # fetchUser → fetchuser, fetch, user
            out.extend(
                _stem(part.lower())
                for part in parts
                if (len(part) > 1 or part.isdigit()) and part.lower() not in STOPWORDS
            )
    return out


def similarity(a: str, b: str) -> float:
    """Cosine similarity of the two texts' term counts, from 0 (nothing shared) to 1."""
    return cosine(Counter(tokens(a)), Counter(tokens(b)))


T = TypeVar("T")


def distinct(items: Iterable[T], text: Callable[[T], str], alike: float) -> Iterator[T]:
    """``items`` in order, without those whose ``text`` is at least ``alike`` (``cosine``
    of the words' counts) to that of one already given; each text is tokenized once. Lazy:
    a caller that wants the first few stops there."""
    kept: list[Counter[str]] = []
    for item in items:
        words = Counter(tokens(text(item)))
        if any(cosine(words, told) >= alike for told in kept):
            continue
        kept.append(words)
        yield item


def cosine(left: Counter[str], right: Counter[str]) -> float:
    """Cosine similarity of two texts' term counts (``Counter(tokens(text))``): what
    ``similarity`` computes, for callers that compare one text with many."""
    if not left or not right:
        return 0.0
    dot = sum(count * right[term] for term, count in left.items())
    norm = math.sqrt(sum(c * c for c in left.values())) * math.sqrt(
        sum(c * c for c in right.values())
    )
    return dot / norm


def estimate_tokens(text: str) -> int:
    """Tokens a model would read, estimated without its tokenizer: about four characters a
    token for alphabetic text, one a CJK character (errs on the generous side)."""
    cjk = len(CJK_CHAR.findall(text))
    return cjk + math.ceil((len(text) - cjk) / CHARS_PER_TOKEN)
