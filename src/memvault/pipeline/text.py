"""Shaping extracted sentences into board- and fragment-sized pieces: clipped at a word,
closed with the right full stop, and compared so one thing said twice is kept once."""

from __future__ import annotations

from memvault.search.analyzer import similarity
from memvault.vault.snapshot import item_key

SAME_ITEM = 0.6  # lexical similarity above which two items say the same thing


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
