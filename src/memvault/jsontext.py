"""JSON text: compact, UTF-8 as is, fast.

orjson does the work; the standard library takes over for the few values orjson refuses
(integers beyond 64 bits), so any JSON a client sent can be stored back.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: Any) -> str:
    """Compact JSON with non-ASCII characters kept as they are."""
    try:
        return orjson.dumps(value).decode()
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class NotUnicode(ValueError):
    """JSON text that parses but holds a lone surrogate (``\\ud800``), which no UTF-8
    text can store."""


def loads(text: str | bytes) -> Any:
    """Parse JSON; raises ``json.JSONDecodeError`` (with line and column) when malformed and
    ``NotUnicode`` when a string escapes a lone surrogate."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        value = json.loads(text)  # the standard library's error says where and what
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise NotUnicode(f"a string holds a lone surrogate ({exc.object[exc.start]!r})") from None
    return value
