"""Keywords for the board's Keywords column, from weighted texts, in English and Chinese.

English words are counted case-blind and shown in their most common spelling (identifiers
like ``fetchUser`` or ``xterm.js`` stay whole). Chinese has no spaces and memvault ships no
segmenter, so character pairs that avoid function characters stand in for words; a pair
said only once counts for less (it is more likely to straddle two words), and a pair
overlapping a better one is skipped ("命名统一" gives 命名 and 统一, not 名统).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from memvault.analyzer import STOPWORDS

LIMIT = 8

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[._+-][A-Za-z0-9]+)*")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_FUNCTION_CHARS = frozenset(
    "的了是在和与與及把被将將要用这這那个個我你他她它们們就都也还還又很再从從到对對给給让讓请請"
    "吗嗎呢吧啊呀着著过過为為以于於而并並或一不有没沒能会會可下上中里裡来來去说說看做好"
)
# Words of requests and replies that say nothing about the subject.
_NOISE_WORDS = """
please let want need needs run runs use used using make also like get got can could would
should seem seems still maybe work works does doesnt don dont done okay yes now first see
check try trying thing things way something anything file files line lines code via one
two new back start sure well just really much many lot show tell find look looking read
write add added result results error errors fix fixed test instead rather decided going
today help hello thanks
怎么 怎麼 回事 什么 什麼 一下 现在 現在 顺便 順便 看看 然后 然後 时候 時候 已经 已經
"""
_NOISE = frozenset(_NOISE_WORDS.split())


def keywords(texts: Iterable[tuple[str, float]], *, limit: int = LIMIT) -> list[str]:
    """The ``limit`` best terms of ``(text, weight)`` pairs, best first."""
    scores: Counter[str] = Counter()
    texts_with: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    order: dict[str, int] = {}
    for text, weight in texts:
        terms = _terms(text)
        for term in terms:
            key = term.lower()
            scores[key] += weight
            forms.setdefault(key, Counter())[term] += 1
            order.setdefault(key, len(order))
        texts_with.update({term.lower() for term in terms})
    for key in scores:
        if _CJK_RUN.fullmatch(key) and texts_with[key] == 1:
            scores[key] /= 2
    chosen: list[str] = []
    for key in sorted(scores, key=lambda k: (-scores[k], order[k])):
        if _CJK_RUN.fullmatch(key) and any(set(key) & set(c) for c in chosen):
            continue
        chosen.append(forms[key].most_common(1)[0][0])
        if len(chosen) == limit:
            break
    return chosen


def _terms(text: str) -> list[str]:
    found = []
    for match in _WORD.finditer(text):
        word = match.group(0).strip("._+-")
        lowered = word.lower()
        if len(word) >= 3 and lowered not in STOPWORDS and lowered not in _NOISE:
            found.append(word)
    for run in _CJK_RUN.findall(text):
        for i in range(len(run) - 1):
            pair = run[i : i + 2]
            if not set(pair) & _FUNCTION_CHARS and pair not in _NOISE:
                found.append(pair)
    return found
