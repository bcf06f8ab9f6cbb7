"""From a host's payload to the envelope the server takes, the parts every host shares.

A host adapter says what an event is (its hook type and data); this module adds what does
not depend on the host: the stable event id, the project, the timestamp, and the limits
that keep an envelope well under the server's body limit.

``data`` speaks agentmemory's envelope vocabulary (``tool_name``, ``tool_input``,
``tool_output``, ``error``, ``prompt``, ``assistantResponse``…): adapters rename a host's
own word for one of those, and keep every other field the host sent as it came, except
``user_email`` and the ids the envelope already carries.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time

TYPE_CHECKING = False  # typing is not imported at run time: the hook pays for every module
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

# Ways an invocation reads memory for the agent.
READ_SESSION = "session"  # /session/start: the Memory Session ID and the project's memory
READ_PROMPT = "prompt"  # /context for the prompt: a task starts with a read
READ_FILES = "files"  # /enrich: what memory says about the files a tool is about to touch

TEXT_LIMIT = 8000  # characters per string in data; agentmemory keeps 8,000 of a tool output
ITEM_LIMIT = 100  # items per list or object in data
DEPTH_LIMIT = 12
BODY_LIMIT = 512 * 1024  # bytes; the server's default limit is twice that
QUERY_LIMIT = 4000  # the longest query /context takes
KEY_LIMIT = 160
_PRIVATE = frozenset({"user_email"})
_IMAGE_PREFIXES = ("data:image/", "iVBORw0KGgo", "/9j/")


class Translation:
    """One host event in the envelope's terms.

    ``key`` is the host's own id for the event (a tool use id) when it has one; without it
    the event id is a hash of the whole payload. ``read`` says whether the agent gets memory
    back (``READ_SESSION``, ``READ_PROMPT``, ``READ_FILES``), and ``note`` is text to show it
    first.
    """

    __slots__ = ("data", "hook_type", "key", "note", "read")

    def __init__(
        self,
        hook_type: str,
        data: dict,
        *,
        key: object = None,
        read: str | None = None,
    ) -> None:
        self.hook_type = hook_type
        self.data = data
        self.key = key
        self.read = read
        self.note = ""


def kept(
    payload: Mapping[str, object],
    identity: Iterable[str] = (),
    *,
    drop: Iterable[str] = (),
    rename: Mapping[str, str] | None = None,
) -> dict:
    """The payload's fields for ``data``: without PII, the envelope's ids and ``drop``, with
    the host's names for shared fields replaced by the envelope's."""
    skip = _PRIVATE.union(identity, drop)
    rename = rename or {}
    return {rename.get(k, k): v for k, v in payload.items() if k not in skip}


def prompt(data: dict, *, injects: bool) -> Translation:
    """A user message: it starts a task, and a task starts with a read (fragments protocol).

    Where the host takes context at this point the hook fetches memory for the prompt and
    hands it over; where it does not, ``memory_read`` tells the server the agent was left
    to read for itself. A board trigger phrase is recorded and pointed out to the agent.
    """
    data["memory_read"] = "hook" if injects else "agent"
    translation = Translation("prompt_submit", data, read=READ_PROMPT if injects else None)
    text = data.get("prompt")
    if isinstance(text, str) and text.strip():
        from memvault.triggers import recognise  # regexes: paid only on prompts

        trigger = recognise(text)
        if trigger is not None:
            data["trigger"] = trigger.to_dict()
            translation.note = trigger_note(trigger.operation, trigger.session_id)
    return translation


def trigger_note(operation: str, session_id: str | None) -> str:
    """What the agent is told a trigger phrase asked for, and with what to do it."""
    if operation == "organize":
        tool, command = "memory_organize", "memvault organize"
    else:
        tool, command = f"memory_session_{operation}", f"memvault session {operation}"
    target = f" for {session_id}" if session_id else ""
    return (
        f"memvault: the user asked for the session board operation `{operation}`{target}: "
        f"carry it out with memvault's MCP tool `{tool}` (or `{command}`)."
    )


def build(
    *,
    host: str,
    event: str,
    session_id: str,
    cwd: str,
    payload: Mapping[str, object],
    translation: Translation,
    environ: Mapping[str, str],
) -> dict:
    """The envelope for one event."""
    return {
        "hookType": translation.hook_type,
        "sessionId": session_id,
        "project": project_name(cwd, environ),
        "cwd": cwd,
        "timestamp": timestamp(payload),
        "agentId": host,
        "eventId": event_id(host, event, translation.key, payload),
        "data": translation.data,
    }


def encode(envelope: dict) -> bytes:
    """The request body: ``data`` clipped, and clipped harder if the whole is still large."""
    for text, items in ((TEXT_LIMIT, ITEM_LIMIT), (1000, 20)):
        body = _dumps({**envelope, "data": clip(envelope["data"], text, items)})
        if len(body) <= BODY_LIMIT:
            return body
    return _dumps({**envelope, "data": {"omitted": f"a payload of {len(body)} bytes"}})


def event_id(host: str, event: str, key: object, payload: Mapping[str, object]) -> str:
    """Stable across retries: the host's own id for the event, else a hash of the payload.

    Hosts give no per-call id to most events, so two payloads equal field for field are one
    event; real repeats differ in practice (a turn id, a duration, a timestamp).
    """
    if isinstance(key, str) and key.strip() and len(key.strip()) <= KEY_LIMIT:
        part = key.strip()
    else:
        canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
        part = f"sha256-{digest[:32]}"
    return f"{host}:{event[:64]}:{part}"


def timestamp(payload: Mapping[str, object]) -> str:
    """The host's timestamp when it sends one, else now (UTC, milliseconds)."""
    given = payload.get("timestamp")
    if isinstance(given, str) and given.strip():
        return given.strip()[:64]
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def project_name(cwd: str, environ: Mapping[str, str]) -> str:
    """``MEMVAULT_PROJECT`` or ``AGENTMEMORY_PROJECT_NAME``, else the name of the repository
    holding ``cwd``, else the name of ``cwd``: what agentmemory's hooks send, found by looking
    for ``.git`` rather than by running git."""
    for variable in ("MEMVAULT_PROJECT", "AGENTMEMORY_PROJECT_NAME"):
        named = environ.get(variable, "").strip()
        if named:
            return named[:512]
    return _name(_repository(cwd) or cwd)[:512]


def clip(value: object, text: int = TEXT_LIMIT, items: int = ITEM_LIMIT, depth: int = 0) -> object:
    """``value`` with long strings cut, long lists and objects shortened, images left out."""
    if isinstance(value, str):
        if value.startswith(_IMAGE_PREFIXES) and len(value) > 256:
            return "[image data omitted]"
        return value if len(value) <= text else value[:text] + "…[truncated]"
    if depth >= DEPTH_LIMIT and isinstance(value, (dict, list)):
        return clip(_dumps(value).decode(), text, items, depth)
    if isinstance(value, dict):
        pairs = list(value.items())
        kept_pairs = {str(k): clip(v, text, items, depth + 1) for k, v in pairs[:items]}
        if len(pairs) > items:
            kept_pairs["…"] = f"{len(pairs) - items} more fields"
        return kept_pairs
    if isinstance(value, list):
        kept_items = [clip(v, text, items, depth + 1) for v in value[:items]]
        if len(value) > items:
            kept_items.append(f"…{len(value) - items} more items")
        return kept_items
    return value


def snake(name: str) -> str:
    """``PostToolUse``, ``afterFileEdit`` → ``post_tool_use``, ``after_file_edit``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()[:64] or "unknown"


FILE_KEYS = ("file_path", "notebook_path", "path")
MAX_FILES = 20


def touched_files(data: Mapping[str, object]) -> list[str]:
    """The files a tool call names in its input (an edit's path, a multi-edit's paths)."""
    given = data.get("tool_input")
    if not isinstance(given, dict):
        return []
    found = [stripped(given.get(key)) for key in FILE_KEYS]
    edits = given.get("edits")
    if isinstance(edits, list):
        found += [stripped(e.get("file_path")) for e in edits if isinstance(e, dict)]
    return list(dict.fromkeys(f for f in found if f))[:MAX_FILES]


def stripped(value: object) -> str:
    """A string field's value without surrounding space; empty for anything else."""
    return value.strip() if isinstance(value, str) else ""


def _dumps(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("ascii")


def _repository(cwd: str) -> str | None:
    if not os.path.isabs(cwd):
        return None
    folder = os.path.normpath(cwd)
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _name(path: str) -> str:
    return os.path.basename(path.rstrip("/\\")) or path
