"""Cursor's local history: agent transcripts under ``~/.cursor/projects/<slug>/`` and the
IDE's ``state.vscdb`` composer data, as the envelopes Cursor's hooks send.

Agent transcripts (``agent-transcripts/<id>/<id>.jsonl``, flat ``<id>.jsonl``, legacy
``<id>.txt``) carry no times or ids: a prompt's ``<timestamp>`` sets the clock (otherwise
the file's modification time does) and each event is a millisecond after the one before.
Event ids are positions, ``<id>:<line>:<block>`` (``<id>:<line>`` for a legacy block,
counted from 0): the files only grow, so a line keeps its id. The session is the
transcript's id, which is the ``conversation_id`` Cursor's hooks send; a ``tool_use``
block with an id of its own gets the live hook's id for it, ``cursor:postToolUse:<id>``.

- a user row → ``prompt_submit`` (the text inside ``<user_query>``);
- an assistant row's text → ``assistant_response``;
- an assistant row's ``tool_use`` → ``post_tool_use`` (transcripts do not record results;
  a legacy ``[Tool result]`` is paired with its ``[Tool call]``);
- ``turn_ended`` with an error or abort → ``stop`` with its status; a successful one is
  skipped;
- a subagent's transcript (``<id>/subagents/<sub>.jsonl``) → ``subagent_start``, its tool
  calls, ``subagent_stop``.

A conversation found in ``state.vscdb`` is read from there and its transcript is skipped:
the database has times, tool results and ids that the transcript lacks.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from platformdirs import user_config_dir

from memvault.importers import cursor_state
from memvault.importers.cursor_state import AGENT, folder_of_uri
from memvault.importers.driver import (
    Clock,
    JsonLine,
    Step,
    Subagents,
    Transcript,
    clip,
    clip_strings,
    find_files,
    json_lines,
    project_name,
)

_STAMP = re.compile(r"<timestamp>(.*?)</timestamp>", re.DOTALL)
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z_][\w-]*>")
_LOCAL_TIME = re.compile(r"(.*?)\s*\(UTC(?:\s*([+-])(\d{1,2})(?::?(\d{2}))?)?\)\s*$")
# How many folders a slug may cost to resolve on disk before giving up.
_LOOKUPS = 64


def user_dir() -> Path:
    """Cursor's per-user data folder (``…/Cursor/User``) in this OS's standard place."""
    return Path(user_config_dir("Cursor", appauthor=False, roaming=True)) / "User"


def default_paths() -> list[Path]:
    return [Path.home() / ".cursor" / "projects", user_dir()]


# -- what to read ------------------------------------------------------------------------


@dataclass(slots=True)
class Sources:
    transcripts: list[Path] = field(default_factory=list)
    databases: list[Path] = field(default_factory=list)


def discover(paths: list[Path]) -> Sources:
    """Agent transcripts and ``state.vscdb`` files under ``paths`` (folders or files)."""
    found = Sources()
    for path in paths:
        if path.is_file():
            files = [path] if _is_source(path, given=True) else []
        elif (path / "globalStorage").is_dir() or (path / "workspaceStorage").is_dir():
            files = _databases_in(path)  # Cursor's user folder: its History is not ours
        else:
            files = find_files(path, _is_source).files
        for file in files:
            bucket = found.databases if file.suffix == ".vscdb" else found.transcripts
            if file not in bucket:
                bucket.append(file)
    return found


def _databases_in(user: Path) -> list[Path]:
    candidates = [user / "globalStorage" / "state.vscdb"]
    if (user / "workspaceStorage").is_dir():
        candidates += sorted((user / "workspaceStorage").glob("*/state.vscdb"))
    return [path for path in candidates if path.is_file() and not path.is_symlink()]


def _is_source(path: Path, *, given: bool = False) -> bool:
    if path.name == "state.vscdb" or (given and path.suffix == ".vscdb"):
        return True
    return path.suffix in (".jsonl", ".txt") and (given or "agent-transcripts" in path.parts)


class Folders:
    """Where conversations ran: the workspace folders Cursor recorded, by transcript slug
    and by conversation, and as a last resort the folder on disk a slug spells."""

    def __init__(self) -> None:
        self.by_slug: dict[str, str] = {}
        self.by_composer: dict[str, str] = {}

    def learn(self, workspace_storage: Path) -> None:
        """Read every ``workspaceStorage/<hash>/workspace.json`` (and its database)."""
        if not workspace_storage.is_dir():
            return
        for workspace in sorted(workspace_storage.iterdir()):
            self.learn_workspace(workspace)

    def learn_workspace(self, workspace: Path) -> None:
        try:
            described = orjson.loads((workspace / "workspace.json").read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return
        uri = described.get("folder") if isinstance(described, dict) else None
        folder = folder_of_uri(uri) if isinstance(uri, str) else None
        if folder is None:
            return
        self.by_slug.setdefault(slug(folder), folder)
        database = workspace / "state.vscdb"
        if database.is_file():
            for composer in cursor_state.workspace_composers(database):
                self.by_composer.setdefault(composer, folder)

    def for_composer(self, composer_id: str) -> str | None:
        return self.by_composer.get(composer_id)

    def for_slug(self, name: str) -> str | None:
        key = slug(name)
        if key not in self.by_slug:
            found = _spelled_on_disk(key)
            if found is None:
                return None
            self.by_slug[key] = found
        return self.by_slug[key]


def slug(folder: str) -> str:
    """A folder as Cursor names its project folder: ``/Users/me/my-app`` → ``Users-me-my-app``."""
    return re.sub(r"[^A-Za-z0-9]+", "-", folder).strip("-")


def _spelled_on_disk(key: str) -> str | None:
    """The existing folder whose path the slug spells, if one does (``-`` is ambiguous:
    ``a-b`` may be ``/a/b`` or ``/a-b``; each choice is tried against the disk)."""
    if sys.platform == "win32" or not key:
        return None
    parts = key.split("-")
    budget = [_LOOKUPS]

    def search(folder: str, index: int) -> str | None:
        if index == len(parts):
            return folder
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        try:
            names = sorted(e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False))
        except OSError:
            return None
        for name in names:
            words = slug(name).split("-")
            if words and parts[index : index + len(words)] == words:
                found = search(os.path.join(folder, name), index + len(words))
                if found is not None:
                    return found
        return None

    return search("/", 0)


def transcripts(paths: list[Path], *, project: str | None = None) -> list[Transcript]:
    """Everything to import from ``paths``: state databases' conversations, then the
    agent transcripts of conversations the databases do not hold."""
    sources = discover(paths)
    folders = Folders()
    folders.learn(user_dir() / "workspaceStorage")
    for database in sources.databases:
        folders.learn_workspace(database.parent)
    found: list[Transcript] = []
    in_databases: set[str] = set()
    for database in sources.databases:
        for composer in cursor_state.composer_ids(database):
            in_databases.add(composer)
            found.append(
                cursor_state.conversation(
                    database, composer, folder_for=folders.for_composer, project=project
                )
            )
    for path in sources.transcripts:
        if _session_of(path) in in_databases and path.parent.name != "subagents":
            found.append(Transcript(str(path), _read_from_database))
        else:
            found.append(transcript(path, folders=folders, project=project))
    return found


def _read_from_database() -> Iterator[Step]:
    yield Step(0, skipped="transcript of a conversation read from state.vscdb", lines=0)


def transcript(
    path: Path, *, folders: Folders | None = None, project: str | None = None
) -> Transcript:
    """One agent transcript file (``.jsonl`` or legacy ``.txt``)."""
    folder = _folder_of(path, folders or Folders())

    def read() -> Iterator[Step]:
        if path.suffix == ".txt":
            return read_legacy(path, folder=folder, project=project)
        return read_jsonl(path, folder=folder, project=project)

    return Transcript(str(path), read)


def _folder_of(path: Path, folders: Folders) -> str:
    """The project folder, from ``projects/<slug>/agent-transcripts/…``."""
    parts = path.parts
    if "agent-transcripts" in parts:
        name = parts[parts.index("agent-transcripts") - 1]
        return folders.for_slug(name) or name
    return path.parent.name


def _session_of(path: Path) -> str:
    if path.parent.name == "subagents":
        return path.parent.parent.name
    return path.stem


# -- agent transcripts (.jsonl) ----------------------------------------------------------


def read_jsonl(path: Path, *, folder: str, project: str | None = None) -> Iterator[Step]:
    return _Jsonl(path, folder, project).steps()


class _Jsonl:
    def __init__(self, path: Path, folder: str, project: str | None) -> None:
        self.path = path
        self.agent = path.stem if path.parent.name == "subagents" else None
        self.base = _base(path, folder, project)
        self.clock = Clock.from_mtime(path)
        self.subagents = Subagents()

    def steps(self) -> Iterator[Step]:
        for line in json_lines(self.path):
            if line.error is not None:
                yield Step(line.number, error=line.error)
            elif line.record is None:
                yield Step(line.number, skipped="blank line")
            else:
                emitted: list[dict[str, Any]] = []
                skipped = self._row(line, line.record, emitted)
                yield Step(line.number, emitted, skipped=None if emitted else skipped)
        if stops := self.subagents.finish():
            yield Step(0, stops, lines=0)

    def _row(self, line: JsonLine, record: dict[str, Any], out: list) -> str | None:
        role = record.get("role")
        message = record.get("message")
        blocks = _blocks(message.get("content") if isinstance(message, dict) else None)
        if role == "user":
            return self._user(line, blocks, out)
        if role == "assistant":
            return self._assistant(line, blocks, out)
        if record.get("type") == "turn_ended":
            status = record.get("status")
            if status in (None, "success", "completed"):
                return "turn ended"
            data = {"status": status, "error": record.get("error")}
            out.append(self._envelope(line, 0, "stop", data))
            return None
        return str(record.get("type") or "row without a role")

    def _user(self, line: JsonLine, blocks: list[dict], out: list) -> str | None:
        text = "\n".join(b["text"] for b in blocks if isinstance(b.get("text"), str))
        prompt, when = user_text(text)
        if when is not None:
            self.clock.set(when)
        if not prompt:
            return "user row without text"
        if self.agent is None:
            out.append(self._envelope(line, 0, "prompt_submit", {"prompt": clip(prompt)}))
        elif not self.subagents.started(self.agent):
            task = self._envelope(line, 0, "", {"agent_id": self.agent, "task": clip(prompt)})
            out.extend(self.subagents.start(self.agent, task))
        else:
            return "subagent prompt"
        return None

    def _assistant(self, line: JsonLine, blocks: list[dict], out: list) -> str | None:
        skipped = "assistant row without text"
        for index, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                text = clip(block["text"].strip())
                if self.agent is None:
                    data = {"assistantResponse": text}
                    out.append(self._envelope(line, index, "assistant_response", data))
                else:
                    data = {"agent_id": self.agent, "last_assistant_message": text}
                    self.subagents.said(self.agent, self._envelope(line, index, "", data))
                    skipped = "subagent message (its last one is kept)"
            elif kind == "tool_use":
                call_id = block.get("id") if isinstance(block.get("id"), str) else None
                data = {
                    "tool_name": block.get("name") or "tool",
                    "tool_input": clip_strings(block.get("input")),
                }
                if call_id:
                    data["tool_use_id"] = call_id
                if self.agent:
                    data["agent_id"] = self.agent
                event_id = f"{AGENT}:postToolUse:{call_id}" if call_id else None
                out.append(self._envelope(line, index, "post_tool_use", data, event_id))
            elif kind == "tool_result":
                skipped = "tool result"
        return skipped

    def _envelope(
        self,
        line: JsonLine,
        index: int,
        hook: str,
        data: dict[str, Any],
        event_id: str | None = None,
    ) -> dict[str, Any]:
        if event_id is None:
            where = f"{self.agent}:{line.number - 1}" if self.agent else line.number - 1
            event_id = f"{self.base['sessionId']}:{where}:{index}"
        return {
            **self.base,
            "hookType": hook,
            "timestamp": self.clock.tick(),
            "eventId": event_id,
            "data": data,
        }


def user_text(text: str) -> tuple[str, datetime | None]:
    """A user row's prompt (the text inside ``<user_query>``, else the text without its
    tags) and the time its ``<timestamp>`` gives, if any."""
    stamp = _STAMP.search(text)
    when = cursor_time(stamp.group(1)) if stamp else None
    query = _QUERY.search(text)
    prompt = query.group(1) if query else _TAG.sub("", _STAMP.sub("", text))
    return prompt.strip(), when


def cursor_time(text: str) -> datetime | None:
    """``Tuesday, Sep 29, 2026, 2:29 AM (UTC-4)`` as a UTC time; None if unreadable."""
    match = _LOCAL_TIME.fullmatch(text.strip())
    if not match:
        return None
    local, sign, hours, minutes = match.groups()
    try:
        moment = datetime.strptime(local, "%A, %b %d, %Y, %I:%M %p")
    except ValueError:
        return None
    offset = timedelta(hours=int(hours or 0), minutes=int(minutes or 0))
    return (moment - offset if sign != "-" else moment + offset).replace(tzinfo=UTC)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def _base(path: Path, folder: str, project: str | None) -> dict[str, Any]:
    return {
        "sessionId": _session_of(path),
        "project": project or project_name(folder),
        "cwd": folder,
        "agentId": AGENT,
    }


# -- legacy transcripts (.txt) -----------------------------------------------------------

_ROLE = re.compile(r"^(user|assistant):\s*$")
_MARK = re.compile(r"^\[(Thinking|Tool call|Tool result)\]\s?(.*)$")
_ARGUMENT = re.compile(r"^\s+([\w.-]+):\s?(.*)$")


@dataclass(slots=True)
class _Block:
    kind: str  # user, assistant, thinking, call, result
    start: int
    lines: list[str] = field(default_factory=list)
    name: str = ""


def read_legacy(path: Path, *, folder: str, project: str | None = None) -> Iterator[Step]:
    """A legacy flat transcript: ``user:`` / ``assistant:`` sections with ``[Thinking]``,
    ``[Tool call] Name`` (indented ``arg: value`` lines) and ``[Tool result] Name``."""
    reader = _Legacy(_base(path, folder, project), Clock.from_mtime(path))
    number = 0
    with open(path, encoding="utf-8", errors="replace", newline=None) as stream:
        for number, text in enumerate(stream, start=1):
            emitted, skipped = reader.line(number, text.rstrip("\n"))
            yield Step(number, emitted, skipped=skipped)
    if tail := reader.close():
        yield Step(number, tail, lines=0)


class _Legacy:
    def __init__(self, base: dict[str, Any], clock: Clock) -> None:
        self.base = base
        self.clock = clock
        self.role = ""
        self.block: _Block | None = None
        self.calls: list[_Block] = []  # calls waiting for their results, in order

    def line(self, number: int, text: str) -> tuple[list[dict[str, Any]], str | None]:
        """Read one line: the envelopes of the block it closes, and why the line itself
        is left out, if it is."""
        role = _ROLE.match(text)
        mark = _MARK.match(text)
        block = self.block
        if role or mark:
            emitted = self._close()
            if role:
                self.role = role.group(1)
                self.block = None
            elif mark.group(1) == "Thinking":
                self.block = None  # one line
                return emitted, "thinking"
            else:
                kind = "call" if mark.group(1) == "Tool call" else "result"
                self.block = _Block(kind, number, name=mark.group(2).strip())
            return emitted, None
        if block is not None and block.kind == "call" and not _ARGUMENT.match(text):
            emitted = self._close()  # the call's arguments end at the first other line
            if text.strip():
                self.block = _Block(self.role or "assistant", number, [text])
            return emitted, None
        if block is None:
            if not text.strip():
                return [], None
            self.block = block = _Block(self.role or "user", number)
        block.lines.append(text)
        return [], None

    def close(self) -> list[dict[str, Any]]:
        emitted = self._close()
        emitted += self._unanswered()
        return emitted

    def _close(self) -> list[dict[str, Any]]:
        block, self.block = self.block, None
        if block is None:
            return []
        text = "\n".join(block.lines).strip()
        emitted: list[dict[str, Any]] = []
        if block.kind == "call":
            self.calls.append(block)  # parallel calls all come before their results
        elif block.kind == "result":
            # A result answers the oldest waiting call of its tool.
            at = next((i for i, c in enumerate(self.calls) if c.name == block.name), None)
            if at is None:
                call = _Block("call", block.start, name=block.name)
            else:
                call = self.calls.pop(at)
            emitted.append(self._tool(call, block))
        elif text and block.kind == "user":
            prompt, when = user_text(text)
            if when is not None:
                self.clock.set(when)
            if prompt:
                emitted.append(self._envelope("prompt_submit", block, {"prompt": clip(prompt)}))
        elif text:
            data = {"assistantResponse": clip(text)}
            emitted.append(self._envelope("assistant_response", block, data))
        return emitted

    def _unanswered(self) -> list[dict[str, Any]]:
        calls, self.calls = self.calls, []
        return [self._tool(call, None) for call in calls]

    def _tool(self, call: _Block, result: _Block | None) -> dict[str, Any]:
        arguments = {}
        for line in call.lines:
            if match := _ARGUMENT.match(line):
                arguments[match.group(1)] = match.group(2)
        data: dict[str, Any] = {"tool_name": call.name or "tool", "tool_input": arguments}
        if result is not None:
            data["tool_output"] = clip("\n".join(result.lines).strip())
        return self._envelope("post_tool_use", call, data)

    def _envelope(self, hook: str, block: _Block, data: dict[str, Any]) -> dict[str, Any]:
        return {
            **self.base,
            "hookType": hook,
            "timestamp": self.clock.tick(),
            "eventId": f"{self.base['sessionId']}:{block.start - 1}",
            "data": data,
        }
