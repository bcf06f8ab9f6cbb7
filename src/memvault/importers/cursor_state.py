"""Cursor's ``state.vscdb``: composer conversations stored by the IDE, read-only.

The database belongs to a running Cursor, so it is opened with SQLite's read-only,
immutable URI flags: memvault never writes to it, takes no lock, and reads what is on disk
(the newest seconds may still be in Cursor's write-ahead log; a later import picks them up).

- a user bubble (``type`` 1) → ``prompt_submit``;
- an assistant bubble's text → ``assistant_response``; thinking is skipped;
- an assistant bubble's ``toolFormerData`` → ``post_tool_use`` with its result, or
  ``post_tool_failure`` when its status is ``error`` or ``cancelled``; a call that never
  finished is skipped.

Event ids: the bubble id for text; for a tool call, ``cursor:postToolUse:<toolCallId>``
(``…postToolUseFailure…`` for a failure), the id the live hook gives a call.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import orjson

from memvault import jsontext
from memvault.domain import parse_timestamp
from memvault.importers.driver import Clock, Step, Transcript, clip, clip_strings, project_name

AGENT = "cursor"
NO_FOLDER = "empty-window"  # Cursor's own name for a window without a folder
_FINISHED = {"completed", "error", "cancelled"}


def open_readonly(path: Path) -> sqlite3.Connection:
    uri = path.resolve().as_uri() + "?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True, check_same_thread=False)


def composer_ids(path: Path) -> list[str]:
    """The conversations a database holds (none when it has no composer table)."""
    try:
        with closing(open_readonly(path)) as db:
            rows = db.execute(
                # A key range, not LIKE: it walks the key index instead of the table.
                "SELECT key FROM cursorDiskKV WHERE key >= 'composerData:' "
                "AND key < 'composerData;' ORDER BY key"
            ).fetchall()
    except sqlite3.Error:
        return []
    return [key.removeprefix("composerData:") for (key,) in rows]


def workspace_composers(path: Path) -> list[str]:
    """The conversations a workspace database lists as its own."""
    try:
        with closing(open_readonly(path)) as db:
            row = db.execute(
                "SELECT value FROM ItemTable WHERE key = 'composer.composerData'"
            ).fetchone()
    except sqlite3.Error:
        return []
    listing = _json(row[0]) if row else None
    composers = listing.get("allComposers") if isinstance(listing, dict) else None
    return [
        c["composerId"]
        for c in composers or []
        if isinstance(c, dict) and isinstance(c.get("composerId"), str)
    ]


def folder_of_uri(uri: str) -> str | None:
    """``file:///Users/me/app`` → ``/Users/me/app`` (and ``/C:/x`` → ``C:/x``)."""
    parsed = urlparse(uri)
    if not parsed.path:
        return None
    path = unquote(parsed.path)
    if len(path) > 2 and path[0] == "/" and path[2] == ":":
        path = path[1:]
    return path.rstrip("/") or "/"


def conversation(
    path: Path,
    composer_id: str,
    *,
    folder_for: Callable[[str], str | None],
    project: str | None = None,
) -> Transcript:
    return Transcript(
        f"{path}#{composer_id}",
        lambda: read(path, composer_id, folder_for=folder_for, project=project),
    )


def read(
    path: Path,
    composer_id: str,
    *,
    folder_for: Callable[[str], str | None],
    project: str | None = None,
) -> Iterator[Step]:
    """One conversation's bubbles, in the order Cursor shows them."""
    with closing(open_readonly(path)) as db:
        composer = _value(db, f"composerData:{composer_id}")
        if not isinstance(composer, dict):
            yield Step(0, error="its composerData is missing or unreadable", lines=0)
            return
        bubbles = _bubbles(db, composer_id, composer)
        first = next(bubbles, None)
        folder = folder_for(composer_id) or _folder_in(first) or NO_FOLDER
        base = {
            "sessionId": composer_id,
            "project": project or project_name(folder),
            "cwd": folder,
            "agentId": AGENT,
        }
        created = composer.get("createdAt")
        clock = Clock(
            datetime.fromtimestamp(created / 1000, UTC)
            if isinstance(created, int | float)
            else datetime.fromtimestamp(path.stat().st_mtime, UTC)
        )
        if first is None:
            yield Step(0, skipped="conversation without messages", lines=0)
            return
        for number, bubble in enumerate(_chain(first, bubbles), start=1):
            yield _step(number, bubble, base, clock)


def _step(number: int, bubble: Any, base: dict[str, Any], clock: Clock) -> Step:
    if isinstance(bubble, _Gap):
        return Step(number, skipped=bubble.reason)
    if not isinstance(bubble, dict):
        return Step(number, error="bubble is not a JSON object")
    created = bubble.get("createdAt")
    when = parse_timestamp(created) if isinstance(created, str) else None
    if when is not None:
        clock.set(when)
    bubble_id = str(bubble.get("bubbleId") or f"bubble-{number}")
    text = bubble.get("text") if isinstance(bubble.get("text"), str) else ""

    def envelope(hook: str, event_id: str, data: dict[str, Any]) -> dict[str, Any]:
        return {
            **base,
            "hookType": hook,
            "timestamp": clock.tick(),
            "eventId": event_id,
            "data": data,
        }

    if bubble.get("type") == 1:
        if not text.strip():
            return Step(number, skipped="empty message")
        return Step(number, [envelope("prompt_submit", bubble_id, {"prompt": clip(text)})])
    emitted = []
    if text.strip():
        data = {"assistantResponse": clip(text.strip())}
        emitted.append(envelope("assistant_response", bubble_id, data))
    tool = bubble.get("toolFormerData")
    unfinished = False
    if isinstance(tool, dict):
        status = tool.get("status") or ("completed" if "result" in tool else None)
        if status in _FINISHED:
            hook, data = _tool(tool, status)
            emitted.append(envelope(hook, _tool_event_id(tool, hook, bubble_id), data))
        else:
            unfinished = True
    if emitted:
        return Step(number, emitted)
    if unfinished:
        return Step(number, skipped="tool call that never finished")
    return Step(number, skipped="thinking" if bubble.get("thinking") else "empty message")


def _tool_event_id(tool: dict[str, Any], hook: str, bubble_id: str) -> str:
    """The id Cursor's live hook gives the call (``cursor:postToolUse:<toolCallId>``), so a
    conversation the hooks already sent adds nothing for it."""
    call_id = tool.get("toolCallId")
    if not isinstance(call_id, str) or not call_id:
        return f"{bubble_id}:tool"
    event = "postToolUse" if hook == "post_tool_use" else "postToolUseFailure"
    return f"{AGENT}:{event}:{call_id}"


def _tool(tool: dict[str, Any], status: str) -> tuple[str, dict[str, Any]]:
    name = tool.get("name") if isinstance(tool.get("name"), str) else f"tool {tool.get('tool')}"
    arguments = _json(tool.get("rawArgs"))
    if arguments is None:
        arguments = _json(tool.get("params"))
    data: dict[str, Any] = {"tool_name": name, "tool_input": clip_strings(arguments)}
    if tool.get("toolCallId"):
        data["tool_use_id"] = tool["toolCallId"]
    result = tool.get("result")
    if result is None or isinstance(result, str):
        output = result or ""
    else:
        output = orjson.dumps(result).decode()
    if status == "completed":
        data["tool_output"] = clip(output)
        return "post_tool_use", data
    data["error"] = clip(output) or status
    return "post_tool_failure", data


@dataclass(frozen=True, slots=True)
class _Gap:
    reason: str  # why there is no bubble where the conversation lists one


def _bubbles(db: sqlite3.Connection, composer_id: str, composer: dict) -> Iterator[Any]:
    """Each bubble as it is stored, or a ``_Gap`` saying why there is none. Modern storage keeps
    them under their own keys in ``fullConversationHeadersOnly`` order; older versions
    inline them in ``conversation``."""
    headers = composer.get("fullConversationHeadersOnly")
    if isinstance(headers, list) and headers:
        inline = composer.get("conversationMap")
        inline = inline if isinstance(inline, dict) else {}
        for header in headers:
            bubble_id = header.get("bubbleId") if isinstance(header, dict) else None
            if not isinstance(bubble_id, str):
                yield _Gap("header without a bubble id")
                continue
            bubble = _value(db, f"bubbleId:{composer_id}:{bubble_id}") or inline.get(bubble_id)
            yield bubble if bubble is not None else _Gap("missing bubble")
        return
    yield from composer.get("conversation") or []


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


def _folder_in(bubble: Any) -> str | None:
    uris = bubble.get("workspaceUris") if isinstance(bubble, dict) else None
    if isinstance(uris, list) and uris and isinstance(uris[0], str):
        return folder_of_uri(uris[0])
    return None


def _value(db: sqlite3.Connection, key: str) -> Any:
    """The JSON value stored under ``key``; None when there is none. A value that is not
    JSON comes back as text, which callers treat as not an object."""
    try:
        row = db.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()
    except sqlite3.Error:
        return None
    return _json(row[0]) if row else None


def _json(value: Any) -> Any:
    """A JSON text (stored as TEXT or BLOB) decoded, or ``value`` itself if it is not."""
    if isinstance(value, bytes | str):
        try:
            decoded = orjson.loads(value)
        except orjson.JSONDecodeError:
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        # Nested deeper than memvault reads (as a transcript line is): this value alone is
        # skipped, as text no caller takes for an object; the rest of the state imports.
        return None if jsontext.too_deep(value, decoded) else decoded
    return value
