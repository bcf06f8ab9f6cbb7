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


def loads(text: str | bytes) -> Any:
    """Parse JSON; raises ``json.JSONDecodeError`` (with line and column) when malformed."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)  # the standard library's error says where and what
