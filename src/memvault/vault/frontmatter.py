"""YAML frontmatter (Obsidian properties) read with PyYAML, changed line by line.

A person's properties are theirs: memvault never re-serializes a frontmatter block. To set
a property it replaces only that key's own lines (the key and the indented lines under it)
or adds the key at the end; every other byte (order, quoting, comments, lists written
inline or as blocks) stays as it was.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from typing import Any

import yaml

FENCE = "---"
_KEY = re.compile(r"""^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#:'"-][^:]*?)\s*:(?:\s|$)""")
# Strings a YAML 1.2 reader (js-yaml, Obsidian's parser…) would take for something else.
_YAML12_SPECIAL = re.compile(
    r"[-+]?(?:\.inf|\.Inf|\.INF)|\.nan|\.NaN|\.NAN|[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?"
    r"|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+|true|True|TRUE|false|False"
    r"|FALSE|null|Null|NULL|~|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF"
)


class FrontmatterError(ValueError):
    """The frontmatter is not YAML memvault can read."""


def split(text: str) -> tuple[list[str] | None, str]:
    """(frontmatter lines without the fences, body); None when the file has no frontmatter."""
    body_text = text.removeprefix("\ufeff")
    lines = body_text.split("\n")
    if not lines or lines[0].rstrip("\r") != FENCE:
        return None, text
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") == FENCE:
            return lines[1:index], "\n".join(lines[index + 1 :])
    return None, text  # an opening fence that never closes is not frontmatter


def read(text: str) -> dict[str, Any]:
    """The properties of a note (empty when it has none). Dates come back as ISO strings."""
    lines, _ = split(text)
    if lines is None:
        return {}
    try:
        data = yaml.safe_load("\n".join(lines))
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"frontmatter is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError("frontmatter must be a set of properties (a YAML mapping)")
    return {str(key): _plain(value) for key, value in data.items()}


def with_properties(text: str, changes: dict[str, Any], remove: tuple[str, ...] = ()) -> str:
    """``text`` with ``changes`` set and ``remove`` deleted; every other byte as it was."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines, body = split(text)
    newline = "\r\n" if "\r\n" in text else "\n"
    if lines is None:
        lines, body = [], text.removeprefix("\ufeff")
    lines = [line.rstrip("\r") for line in lines]
    spans = _key_spans(lines)
    dropped: set[int] = set()
    replaced: dict[int, list[str]] = {}
    appended: list[str] = []
    for key in remove:
        if key in spans:
            dropped.update(range(*spans[key]))
    for key, value in changes.items():
        rendered = render_property(key, value).split("\n")
        if key in spans:
            start, end = spans[key]
            replaced[start] = rendered
            dropped.update(range(start + 1, end))
        else:
            appended += rendered
    kept: list[str] = []
    for index, line in enumerate(lines):
        if index in replaced:
            kept += replaced[index]
        elif index not in dropped:
            kept.append(line)
    head = newline.join([FENCE, *kept, *appended, FENCE])
    return f"{bom}{head}{newline}{body}" if body else f"{bom}{head}{newline}"


def replace_body(text: str, body: str) -> str:
    """``text`` with everything after its frontmatter replaced by ``body``."""
    lines, _ = split(text)
    if lines is None:
        return body
    bom = 1 if text.startswith("\ufeff") else 0
    offset = bom
    for _ in range(len(lines) + 2):  # the two fences and the lines between them
        end = text.find("\n", offset)
        offset = len(text) if end < 0 else end + 1
    return text[:offset] + body


def render_property(key: str, value: Any) -> str:
    """One property as YAML lines, the way Obsidian writes it: a plain key, lists as block
    sequences, nested lists and mappings in flow style. Every string is written so that
    PyYAML (YAML 1.1), js-yaml and npm ``yaml`` (YAML 1.2, what Obsidian and its plugins
    read) all read back the same text: plain when it cannot be taken for anything else,
    single-quoted when it is one printable line, else double-quoted with escapes.

    ``key`` must be a property name (see ``key_problem``): ``FrontmatterError`` otherwise."""
    problem = key_problem(key)
    if problem:
        raise FrontmatterError(problem)
    if isinstance(value, list | tuple):
        if not value:
            return f"{key}: []"
        items = "\n".join(f"  - {_value(item, flow=False)}" for item in value)
        return f"{key}:\n{items}"
    rendered = _value(value, flow=False)
    return f"{key}: {rendered}" if rendered else f"{key}:"


@functools.lru_cache(maxsize=4096)  # the same few names are written again and again
def key_problem(key: Any) -> str | None:
    """Why ``key`` cannot be a property name memvault writes, or None when it can.

    Keys are checked, not quoted: Obsidian's Properties view, its property types and the
    Dataview-style queries people write all work with plain names, and a quoted key holding
    a newline, ``: `` or ``#`` would be a property nobody can type. So a key is one line of
    letters, digits, ``_``, ``-``, ``.`` and inner spaces, starting with a letter, digit or
    ``_``, that every YAML reader takes for that same string."""
    if not isinstance(key, str):
        return f"a property name must be a string, not {key!r}"
    if not key:
        return "a property name must not be empty"
    if len(key) > KEY_LIMIT:
        return f"property name {key[:40]!r}… is longer than {KEY_LIMIT} characters"
    if not _PLAIN_KEY.fullmatch(key) or _YAML12_SPECIAL.fullmatch(key):
        return (
            f"property name {key!r} is not a plain name: use letters, digits, _, - and . "
            "(spaces inside), on one line, starting with a letter, digit or _"
        )
    try:
        loaded = yaml.safe_load(f"{key}: 0")
    except yaml.YAMLError:
        loaded = None
    if loaded != {key: 0} or not isinstance(next(iter(loaded)), str):
        return f"property name {key!r} would be read as something else than that name"
    return None


KEY_LIMIT = 100
_PLAIN_KEY = re.compile(r"[^\W][\w.-]*(?: +[\w.-]+)*")
# A string written as it is: it starts with a letter and holds only characters no YAML
# reader gives a meaning to in a block value (no `: `, ` #`, quotes at the start, flow
# brackets, escapes…).
_PLAIN = re.compile(r"[^\W\d_][\w./()+=~',-]*(?: +[\w./()+=~',-]+)*")
# Characters a single-quoted scalar cannot hold as they are: line breaks to YAML 1.1
# (NEL, U+2028, U+2029 as well as CR and LF), tabs, other control characters, the BOM,
# non-characters and lone surrogates.
_UNQUOTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\x00": "\\0"}
NESTING_LIMIT = 8


def _value(value: Any, *, flow: bool, depth: int = 0) -> str:
    """``value`` as a YAML value; ``flow`` inside a flow collection, where commas and
    brackets mean something and every string is quoted."""
    if depth > NESTING_LIMIT:
        raise FrontmatterError(f"a property value is nested deeper than {NESTING_LIMIT} levels")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        if "e" in text and "." not in text:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"  # YAML 1.1 reads a float only with a dot
        return text
    if isinstance(value, dt.datetime) and not (value.second or value.microsecond):
        # Obsidian's own form, to the minute: every reader takes it for that text.
        return value.isoformat(timespec="minutes")
    if isinstance(value, dt.date):
        return value.isoformat()  # unquoted: Obsidian's date and datetime types
    if value is None:
        return "null" if flow else ""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v, flow=True, depth=depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        items = (
            f"{_quoted(str(k))}: {_value(v, flow=True, depth=depth + 1)}" for k, v in value.items()
        )
        return "{" + ", ".join(items) + "}"
    return _string(str(value), flow=flow)


def _string(text: str, *, flow: bool) -> str:
    if not flow and _PLAIN.fullmatch(text) and not _YAML12_SPECIAL.fullmatch(text):
        return text
    if not flow and text and not _UNQUOTABLE.search(text):
        return "'" + text.replace("'", "''") + "'"
    return _quoted(text)


def _quoted(text: str) -> str:
    """A double-quoted scalar: every character that is not printable as it is to both
    YAML 1.1 and 1.2 readers escaped; a lone surrogate (not text) becomes U+FFFD."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif "\ud800" <= char <= "\udfff":
            out.append("\ufffd")
        elif _UNQUOTABLE.fullmatch(char):
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _key_spans(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Top-level key → (first line, end) of its own lines: the key line and the indented
    or list lines under it."""
    spans: dict[str, tuple[int, int]] = {}
    current: str | None = None
    start = 0
    for index, line in enumerate(lines):
        match = _KEY.match(line)
        if match and not line.startswith((" ", "\t", "-")):
            if current is not None:
                spans[current] = (start, _trim_end(lines, start, index))
            current, start = _unquote(match.group(1).strip()), index
    if current is not None:
        spans[current] = (start, _trim_end(lines, start, len(lines)))
    return spans


def _unquote(key: str) -> str:
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
        return key[1:-1]
    return key


def _trim_end(lines: list[str], start: int, end: int) -> int:
    """Trailing blank or comment lines belong to nobody: they stay where they are."""
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip()[:1] == "#"):
        end -= 1
    return end


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value
