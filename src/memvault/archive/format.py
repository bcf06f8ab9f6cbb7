"""The archive format: one JSON object per line, a header first, then records by kind.

```
{"format": "memvault-export", "version": 1, "exportedAt": …, "memvaultVersion": …,
 "includes": {"events": true}}
{"kind": "session", "id": …, "project": …, "cwd": …, "agentId": …, "title": …, …}
{"kind": "event", "hookType": …, "sessionId": …, "eventId": …, "timestamp": …, "data": …}
{"kind": "fragment", "path": "demo-app - 2026-11-30 - uses bcrypt.md", "text": …}
{"kind": "board", "path": "memory/index.md", "text": …}
{"kind": "snapshot", "path": "memory/sessions/2026-11-30-1432-cursor-main-agent.md", …}
{"kind": "end", "records": {"session": 2, "event": 57, …}}
```

This module holds the names, the header check and the path rules every record must pass
before anything is written.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from memvault.errors import InvalidInput

FORMAT = "memvault-export"
VERSION = 1
KINDS = ("session", "event", "fragment", "board", "snapshot")
END = "end"
BOARD_PATH = "memory/index.md"
SESSIONS_FOLDER = ("memory", "sessions")
ARCHIVE_FOLDER = ("memory", "archive")
MEDIA_TYPE = "application/x-ndjson"

_DRIVE = re.compile(r"^[A-Za-z]:")


class ArchiveError(InvalidInput):
    """The input is not an archive memvault can import; nothing was written."""


class UnsafePath(ValueError):
    """A record's path would leave its folder, or is not a markdown file."""


def header(*, exported_at: str, memvault_version: str, events: bool) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "exportedAt": exported_at,
        "memvaultVersion": memvault_version,
        "includes": {"events": events},
    }


def is_header(value: Any) -> bool:
    """Whether a decoded first line claims to be an archive header (of any version)."""
    return isinstance(value, dict) and "format" in value and "kind" not in value


def check_header(value: Any) -> dict[str, Any]:
    """The header, if this memvault can read the archive it starts; else ``ArchiveError``
    naming what is wrong."""
    if not isinstance(value, dict):
        raise ArchiveError("the first line must be the archive's header, a JSON object")
    name = value.get("format")
    if name != FORMAT:
        raise ArchiveError(f"unknown archive format {name!r}: memvault reads {FORMAT!r}")
    version = value.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ArchiveError(f"unknown {FORMAT} version {version!r}")
    if version > VERSION:
        raise ArchiveError(
            f"this archive is {FORMAT} version {version}, newer than this memvault reads "
            f"(version {VERSION}); upgrade memvault to import it"
        )
    includes = value.get("includes")
    if includes is not None and not isinstance(includes, dict):
        raise ArchiveError("the header's `includes` must be an object")
    return value


def relative_path(value: Any, *, under: Path) -> Path:
    """``under / value`` for a record's path, when it is a relative path to a markdown file
    that stays inside ``under``; ``UnsafePath`` naming the problem otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise UnsafePath("`path` must be a non-empty string")
    if "\x00" in value or "\\" in value:
        raise UnsafePath(f"path {value!r} holds a backslash or a NUL character")
    if value.startswith("/") or _DRIVE.match(value):
        raise UnsafePath(f"path {value!r} is absolute; archive paths are relative")
    parts = PurePosixPath(value).parts
    if any(part in ("", ".", "..") for part in value.split("/")):
        raise UnsafePath(f"path {value!r} leaves its folder or has empty parts")
    if any(part.startswith(".") for part in parts):
        raise UnsafePath(f"path {value!r} names a hidden file or folder")
    if not value.endswith(".md"):
        raise UnsafePath(f"path {value!r} is not a markdown (.md) file")
    target = under.joinpath(*parts)
    # A symbolic link inside the folder must not carry the write somewhere else.
    root = under.resolve()
    if not target.parent.resolve().is_relative_to(root):
        raise UnsafePath(f"path {value!r} leads outside its folder through a link")
    return target


def snapshot_path(value: Any, *, vault: Path) -> Path:
    """A snapshot's file: ``memory/sessions/<id>.md`` or ``memory/archive/<id>/<name>.md``."""
    target = relative_path(value, under=vault)
    parts = PurePosixPath(value).parts
    live = parts[:2] == SESSIONS_FOLDER and len(parts) == 3
    archived = parts[:2] == ARCHIVE_FOLDER and len(parts) == 4
    if not (live or archived):
        raise UnsafePath(
            f"snapshot path {value!r} is not memory/sessions/<id>.md or "
            "memory/archive/<id>/<file>.md"
        )
    return target
