"""JSON text: compact, UTF-8 as is, fast, and bounded.

orjson does the work; the standard library takes over for the few texts orjson refuses
(numbers beyond a double), so any JSON a client sent can be stored back. What ``loads``
returns, every later step can take: nesting at most ``MAX_DEPTH`` levels, integers of at
most ``MAX_INT_DIGITS`` digits, finite numbers, text UTF-8 can hold. Anything else is
``UnusableJson``, with the problem and the limit named.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import orjson

MAX_DEPTH = 128
"""Levels of nesting a JSON text may hold (``[]`` is one level, ``{"a": []}`` two).

Code after the decoder walks values recursively (redaction, the synthetic observation,
encoders: orjson's own limit is 254 levels), so a value is refused here rather than half
way through being stored. Hook payloads, tool arguments and archives nest a few levels."""

MAX_INT_DIGITS = 1000
"""Digits an integer may have. Python turns integers into text and back in time growing
with the square of their length, and refuses beyond 4,300 digits; a number a client has
reason to send is far shorter."""


def dumps(value: Any) -> str:
    """Compact JSON with non-ASCII characters kept as they are."""
    try:
        return orjson.dumps(value).decode()
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class UnusableJson(json.JSONDecodeError):
    """Well-formed JSON text holding a value memvault does not take.

    A ``JSONDecodeError``, so code that reads JSON text which may be bad handles it as it
    handles malformed text. ``str()`` is the problem alone; ``field`` is where it is
    (``data.items.2``), when it is at one place."""

    def __init__(self, problem: str, field: str | None = None) -> None:
        super().__init__(problem, "", 0)
        self.field = field

    def __str__(self) -> str:
        return self.msg


class NotUnicode(UnusableJson):
    """JSON text that parses but holds a lone surrogate (``\\ud800``), which no UTF-8
    text can store."""


class TooDeep(UnusableJson):
    """JSON text nested deeper than ``MAX_DEPTH`` levels."""


class NumberRefused(UnusableJson):
    """An integer longer than ``MAX_INT_DIGITS`` digits, or a number beyond a double."""


def loads(text: str | bytes) -> Any:
    """Parse JSON; raises ``json.JSONDecodeError`` (with line and column) when malformed and
    ``UnusableJson`` (a subclass) when it holds what memvault does not take."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = _standard_loads(text)  # the standard library's error says where and what
        _check_unicode(value)  # orjson refuses lone surrogates itself; this parser does not
    if _brackets(text) > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels, the most memvault reads")
    return value


def too_deep(text: str | bytes, value: Any) -> bool:
    """Whether ``value``, decoded from ``text`` by another parser, nests deeper than
    ``MAX_DEPTH`` levels (what ``loads`` refuses as ``TooDeep``)."""
    return _brackets(text) > MAX_DEPTH and _deeper_than(value, MAX_DEPTH)


def _check_unicode(value: Any) -> None:
    try:
        orjson.dumps(value)  # fails on a lone surrogate (and on integers beyond 64 bits)
    except (orjson.JSONEncodeError, TypeError):
        found = _surrogate_in(value)
        if found is not None:
            field, char = found
            where = f"{field} holds" if field else "it holds"
            raise NotUnicode(
                f"{where} a lone surrogate ({char!r}), which UTF-8 text cannot store", field
            ) from None


def _standard_loads(text: str | bytes) -> Any:
    try:
        return json.loads(
            text, parse_int=_integer, parse_float=_number, parse_constant=_not_a_number
        )
    except RecursionError:  # deeper than the interpreter's stack, far beyond MAX_DEPTH
        raise TooDeep(
            f"JSON nested deeper than {MAX_DEPTH} levels, the most memvault reads"
        ) from None


def _integer(digits: str) -> int:
    length = len(digits) - digits.startswith("-")
    if length > MAX_INT_DIGITS:
        raise NumberRefused(
            f"an integer of {length} digits; at most {MAX_INT_DIGITS} digits are read"
        )
    return int(digits)


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 40 else f"{text[:20]}…{text[-10:]}"
        raise NumberRefused(f"the number {shown} is beyond the range of a double")
    return value


def _not_a_number(name: str) -> Any:
    raise UnusableJson(f"{name} is not a JSON value")


def _brackets(text: str | bytes) -> int:
    """How many arrays and objects the text opens at most: fewer than the limit cannot nest
    beyond it, and counting (in C) is much cheaper than walking the value."""
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return text.count(b"[") + text.count(b"{")


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` (as decoded: plain dicts and lists) nests more than ``limit``
    levels: level by level, without recursion, visiting each container once."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        inner = []
        for container in level:
            for child in container.values() if type(container) is dict else container:
                if type(child) is dict or type(child) is list:
                    inner.append(child)
        level = inner
    return False


def _surrogate_in(value: Any) -> tuple[str, str] | None:
    """Where the first lone surrogate is (``data.items.2``, or a key's path), and it."""
    for path, text, is_key in _texts(value):
        bad = _lone_surrogate(text)
        if bad is not None:
            return (path.encode("utf-8", "backslashreplace").decode() if is_key else path), bad
    return None


def _texts(value: Any, keep: frozenset[str] = frozenset()) -> Iterator[tuple[str, str, bool]]:
    """Every string in ``value`` with its path (``items.2``, ``title``), dict keys too
    (``is_key``), in document order, without recursion; what is under a key in ``keep`` is
    not looked into."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            yield path, item, False
        elif isinstance(item, dict):
            children = []
            for key, child in item.items():
                inner = f"{path}.{key}" if path else str(key)
                if isinstance(key, str):
                    yield inner, key, True
                if key not in keep:
                    children.append((inner, child))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend(
                reversed([(f"{path}.{n}" if path else str(n), c) for n, c in enumerate(item)])
            )


def nul_in(value: Any, *, keep: frozenset[str] = frozenset()) -> str | None:
    """Where the first NUL character (U+0000) is in ``value``'s text, as a path
    (``title``, ``items.2``, a key's path; ``""`` for a bare string), or ``None``.

    PostgreSQL's text cannot hold U+0000, so memvault stores it on neither engine outside
    what it keeps as JSON text (escaped there): values under a key in ``keep`` (an event's
    ``data``) are not looked into."""
    for path, text, is_key in _texts(value, keep):
        if "\x00" in text:
            return path.replace("\x00", "\\0") if is_key else path
    return None


def _lone_surrogate(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return text[exc.start]
    return None
