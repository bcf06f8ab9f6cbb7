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
# Seconds: identical payloads this close together, with nothing else to tell them apart, are
# taken for one invocation run twice (see ``moment``).
REPEAT_WINDOW = 10
# A host's id for the turn: with it, a prompt's payload is unique to that prompt.
TURN_KEYS = ("prompt_id", "turn_id", "generation_id", "execution_id")
_PRIVATE = frozenset({"user_email"})
# A UTF-16 half without its other half: what a JavaScript host writes when it cuts a string
# inside an emoji. The server refuses such text, so it becomes U+FFFD before it is sent.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_IMAGE_PREFIXES = ("data:image/", "iVBORw0KGgo", "/9j/")


class Translation:
    """One host event in the envelope's terms.

    ``key`` is the host's own id for the event (a tool use id) when it has one; without it
    the event id is a hash of the payload and its moment (``event_id``). ``read`` says
    whether the agent gets memory back (``READ_SESSION``, ``READ_PROMPT``, ``READ_FILES``),
    and ``note`` is text to show it first.
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
    transcript: bool = False,
    now: float | None = None,
) -> dict:
    """The envelope for one event. ``transcript``: the host appends every message to the
    file at the payload's ``transcript_path``, so its size tells turns apart."""
    when = moment(payload, translation.hook_type, transcript=transcript, now=now)
    return {
        "hookType": translation.hook_type,
        "sessionId": session_id,
        "project": project_name(cwd, environ),
        "cwd": cwd,
        "timestamp": timestamp(payload),
        "agentId": host,
        "eventId": event_id(host, event, translation.key, payload, when),
        "data": translation.data,
    }


def encode(envelope: dict) -> bytes:
    """The request body: ``data`` clipped, and clipped harder if the whole is still large."""
    for text, items in ((TEXT_LIMIT, ITEM_LIMIT), (1000, 20)):
        body = dumps({**envelope, "data": clip(envelope["data"], text, items)})
        if len(body) <= BODY_LIMIT:
            return body
    return dumps({**envelope, "data": {"omitted": f"a payload of {len(body)} bytes"}})


def event_id(
    host: str, event: str, key: object, payload: Mapping[str, object], when: str = ""
) -> str:
    """The host's own id for the event, else a hash of the payload and its ``moment``.

    The same invocation run twice (two configs naming the hook, a host's retry) gets one
    id; two events that only look alike (a second "continue", a second ``Stop`` with the
    same last message) get two, because their moments differ. A spooled envelope keeps the
    id it was given, so its deliveries are one event whenever they happen.
    """
    if isinstance(key, str) and key.strip() and len(key.strip()) <= KEY_LIMIT:
        part = key.strip()
    else:
        canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        hashed = hashlib.sha256(canonical.encode("utf-8", "surrogatepass"))
        if when:
            hashed.update(b"\n" + when.encode("utf-8", "surrogatepass"))
        part = f"sha256-{hashed.hexdigest()[:32]}"
    return f"{host}:{event[:64]}:{part}"


def moment(
    payload: Mapping[str, object],
    hook_type: str,
    *,
    transcript: bool = False,
    now: float | None = None,
) -> str:
    """What tells this event from an earlier one with the same payload; empty when the
    payload tells it itself.

    - A payload with the host's ``timestamp`` (Gemini), or a prompt with the host's turn
      id (``prompt_id``, ``turn_id``, ``generation_id``, ``execution_id``), is unique as it
      is: nothing is added, and the id is the same at any time.
    - Where the host appends every message to the transcript (``transcript``: Claude Code,
      Codex, Gemini) and the file is there, its size: it grows with every prompt, response
      and tool result, so two turns never share it, and an invocation run twice reads it
      at the same point of the conversation.
    - Otherwise the ``REPEAT_WINDOW``-second slot of the clock: identical payloads in one
      slot are one event; a run twice that straddles two slots is recorded twice.
    """
    if stripped(payload.get("timestamp")):
        return ""
    if hook_type == "prompt_submit" and any(stripped(payload.get(k)) for k in TURN_KEYS):
        return ""
    if transcript:
        size = _file_size(payload.get("transcript_path"))
        if size is not None:
            return f"transcript:{size}"
    slot = int((time.time() if now is None else now) // REPEAT_WINDOW)
    return f"time:{slot}"


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
    """``value`` with long strings cut, long lists and objects shortened, images left out,
    and lone surrogates replaced (``unicode_safe``)."""
    if isinstance(value, str):
        if value.startswith(_IMAGE_PREFIXES) and len(value) > 256:
            return "[image data omitted]"
        return unicode_safe(value if len(value) <= text else value[:text] + "…[truncated]")
    if depth >= DEPTH_LIMIT and isinstance(value, (dict, list)):
        return clip(dumps(value).decode(), text, items, depth)
    if isinstance(value, dict):
        pairs = list(value.items())
        kept_pairs = {
            unicode_safe(str(k)): clip(v, text, items, depth + 1) for k, v in pairs[:items]
        }
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


# ``path`` is left out: Grep and Glob name a folder with it, and memory about a folder's
# name is noise before every search.
FILE_KEYS = ("file_path", "notebook_path")
MAX_FILES = 20


def touched_files(data: Mapping[str, object]) -> list[str]:
    """The files a tool call names in its input (an edit's path, a notebook, a multi-edit's
    paths)."""
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


def unicode_safe(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text) if _LONE_SURROGATE.search(text) else text


def dumps(value: object) -> bytes:
    """A request body: compact ASCII JSON, every string and key ``unicode_safe``."""
    return json.dumps(_safe(value), separators=(",", ":")).encode("ascii")


def _safe(value: object) -> object:
    if isinstance(value, str):
        return unicode_safe(value)
    if isinstance(value, dict):
        return {unicode_safe(str(k)): _safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_safe(v) for v in value]
    return value


def _file_size(path: object) -> int | None:
    if not isinstance(path, str) or not path.strip():
        return None
    try:
        return os.stat(path.strip()).st_size
    except (OSError, ValueError):
        return None


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
