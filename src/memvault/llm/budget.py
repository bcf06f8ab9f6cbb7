"""Fitting a prompt into the model's input limit, keeping its start and its end.

Tokens are estimated, not counted with a model's tokenizer (which memvault does not ship):
about four characters per token for alphabetic text and one per CJK character. The start of
a transcript says what the work was and the end says where it got to, so the middle goes.
"""

from __future__ import annotations

import math

from memvault.analyzer import CHARS_PER_TOKEN, CJK_CHAR, estimate_tokens

__all__ = ["estimate_tokens", "fit"]


def fit(text: str, max_tokens: int) -> str:
    """`text` itself when it fits, else its head and tail around a marker, within `max_tokens`."""
    if estimate_tokens(text) <= max_tokens:
        return text
    # The longest marker this text can need, so the real one never overshoots the budget.
    budget = max(0, max_tokens - estimate_tokens(_marker(len(text))))
    head_end = _fitting_length(text, budget // 2)
    tail_start = len(text) - _fitting_length(text[::-1], budget - budget // 2)
    return text[:head_end] + _marker(tail_start - head_end) + text[tail_start:]


def _marker(omitted: int) -> str:
    return f"\n\n[… {omitted} characters cut to fit the model's input limit …]\n\n"


def _fitting_length(text: str, max_tokens: int) -> int:
    """How many leading characters of `text` fit in `max_tokens`."""
    cjk = other = 0
    for length, char in enumerate(text):
        if CJK_CHAR.match(char):
            cjk += 1
        else:
            other += 1
        if cjk + math.ceil(other / CHARS_PER_TOKEN) > max_tokens:
            return length
    return len(text)
