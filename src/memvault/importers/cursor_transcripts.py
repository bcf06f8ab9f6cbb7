"""Cursor's agent transcripts as the envelopes Cursor's hooks send: the ``.jsonl`` files
under ``~/.cursor/projects/<slug>/agent-transcripts/`` and the legacy flat ``.txt`` ones.

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
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memvault.importers.cursor_state import AGENT
from memvault.importers.driver import (
    Clock,
    JsonLine,
    Step,
    Subagents,
    clip,
    clip_strings,
    content_blocks,
    json_steps,
    project_name,
)

_STAMP = re.compile(r"<timestamp>(.*?)</timestamp>", re.DOTALL)
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_TAG = re.compile(r"</?[A-Za-z_][\w-]*>")
_LOCAL_TIME = re.compile(r"(.*?)\s*\(UTC(?:\s*([+-])(\d{1,2})(?::?(\d{2}))?)?\)\s*$")


def session_of(path: Path) -> str:
    """The conversation a transcript file belongs to (a subagent's, its parent's)."""
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
        yield from json_steps(self.path, self._step)
        if stops := self.subagents.finish():
            yield Step(0, stops, lines=0)

    def _step(self, line: JsonLine, record: dict[str, Any]) -> Step:
        emitted: list[dict[str, Any]] = []
        skipped = self._row(line, record, emitted)
        return Step(line.number, emitted, skipped=None if emitted else skipped)

    def _row(self, line: JsonLine, record: dict[str, Any], out: list) -> str | None:
        role = record.get("role")
        message = record.get("message")
        blocks = content_blocks(message.get("content") if isinstance(message, dict) else None)
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


def _base(path: Path, folder: str, project: str | None) -> dict[str, Any]:
    return {
        "sessionId": session_of(path),
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
