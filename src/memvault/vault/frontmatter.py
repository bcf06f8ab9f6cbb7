"""YAML frontmatter (Obsidian properties) read with PyYAML, changed line by line.

A person's properties are theirs: memvault never re-serializes a frontmatter block. To set
a property it replaces only that key's own lines (the key and the indented lines under it)
or adds the key at the end; every other byte (order, quoting, comments, lists written
inline or as blocks) stays as it was.
"""

from __future__ import annotations

import datetime as dt
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
    """One property as YAML lines, the way Obsidian writes it (lists as block sequences)."""
    if isinstance(value, list | tuple):
        if not value:
            return f"{key}: []"
        items = "\n".join(f"  - {_scalar(item)}" for item in value)
        return f"{key}:\n{items}"
    return f"{key}: {_scalar(value)}"


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dt.date):
        return value.isoformat()  # unquoted: Obsidian's date and datetime types
    if value is None:
        return ""
    text = str(value)
    if _YAML12_SPECIAL.fullmatch(text):
        return "'" + text.replace("'", "''") + "'"
    dumped = yaml.safe_dump(text, allow_unicode=True, default_flow_style=True, width=10**9)
    dumped = dumped.removesuffix("\n...\n").rstrip("\n")
    return dumped


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
