"""Claude Code transcripts: ``~/.claude/projects/<slug>/<session>.jsonl``, as the envelopes
its live hooks send.

- a user line's text → ``prompt_submit`` (without the ``<system-reminder>`` blocks Claude
  Code adds); slash-command chatter, interruption markers and meta lines are skipped;
- an assistant line's text → ``assistant_response``; thinking is skipped;
- a ``tool_use`` block and the ``tool_result`` that answers it (paired by
  ``tool_use_id``) → one ``post_tool_use``, or ``post_tool_failure`` when the result is an
  error, at the result's time;
- a ``compact_boundary`` → ``pre_compact``, carrying the summary Claude Code wrote after
  it (the ``isCompactSummary`` line, which is not a prompt);
- a subagent's lines (``isSidechain``, or a ``subagents/agent-*.jsonl`` file) →
  ``subagent_start`` with its task, its tool calls, ``subagent_stop`` with its last message;
- progress, file snapshots, queue operations, titles and other system lines are skipped.

Event ids: the line's ``uuid`` for text and compaction events; for a tool call,
``claude-code:PostToolUse:<tool_use_id>`` (``…PostToolUseFailure…`` for a failure), the id
memvault's live hook gives the same call. The same message always gets the same id.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.importers.driver import (
    Clock,
    Discovery,
    JsonLine,
    Step,
    Subagents,
    Transcript,
    clip,
    clip_strings,
    content_blocks,
    find_files,
    json_lines,
    json_steps,
    project_name,
)

AGENT = "claude-code"
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_NOT_A_PROMPT = re.compile(
    r"^\s*(?:<(?:local-command|command-name|command-message|command-args|bash-input"
    r"|bash-stdout|bash-stderr)|\[Request interrupted)"
)


def default_root() -> Path:
    return Path.home() / ".claude" / "projects"


def discover(root: Path, *, limit: int | None = None, visit_limit: int | None = None) -> Discovery:
    """Every ``*.jsonl`` under ``root`` (subagent files included), or ``root`` itself."""
    return find_files(root, _is_transcript, limit=limit, visit_limit=visit_limit)


def _is_transcript(path: Path) -> bool:
    return path.suffix == ".jsonl"


def transcript(path: Path, *, project: str | None = None) -> Transcript:
    return Transcript(str(path), lambda: read(path, project=project))


def read(path: Path, *, project: str | None = None) -> Iterator[Step]:
    """The steps of one transcript file, line by line."""
    return _Reader(path, project).steps()


@dataclass(slots=True)
class _Call:
    name: str
    input: Any
    agent: str | None


class _Reader:
    def __init__(self, path: Path, project: str | None) -> None:
        self.path = path
        self.project = project
        self.session = session_of(path)
        self.agent = _agent_of(path)
        self.cwd = path.parent.name  # the slug, until a line says where it ran
        self.clock = Clock.from_mtime(path)
        self.calls: dict[str, _Call] = {}
        self.compaction: dict[str, Any] | None = None
        self.subagents = Subagents()

    def steps(self) -> Iterator[Step]:
        yield from json_steps(self.path, self._step)
        released = self.subagents.finish()
        if self.compaction is not None:
            released.insert(0, self.compaction)
        if released:
            yield Step(0, released, lines=0)
        for _ in self.calls:
            yield Step(0, skipped="tool call without a result", lines=0)

    def _step(self, line: JsonLine, record: dict[str, Any]) -> Step:
        emitted: list[dict[str, Any]] = []
        if self.compaction is not None and not record.get("isCompactSummary"):
            emitted.append(self.compaction)
            self.compaction = None
        kind = record.get("type")
        if kind == "user":
            skipped = self._user(line, record, emitted)
        elif kind == "assistant":
            skipped = self._assistant(line, record, emitted)
        elif kind == "system":
            skipped = self._system(line, record)
        else:
            skipped = str(kind) if kind else "line without a type"
        return Step(line.number, emitted, skipped=skipped)

    # -- one line of each kind -----------------------------------------------------------

    def _user(self, line: JsonLine, record: dict[str, Any], out: list) -> str | None:
        content = _content(record)
        if record.get("isCompactSummary"):
            summary = clip(_text(content))
            if self.compaction is None:
                self.compaction = self._envelope(line, record, "pre_compact", {})
            self.compaction["data"]["summary"] = summary
            out.append(self.compaction)
            self.compaction = None
            return None
        if record.get("isMeta"):
            return "meta message"
        before = len(out)
        texts: list[str] = []
        orphans = 0
        for block in content_blocks(content):
            kind = block.get("type")
            if kind == "tool_result":
                orphans += not self._result(line, record, block, out)
            elif kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        text = "\n".join(t for t in texts if t.strip()).strip()
        if "<system-reminder>" in text:  # context Claude Code adds, not what was typed
            text = _REMINDER.sub("", text).strip()
        if not text:
            if len(out) > before:
                return None
            return "tool result without its call" if orphans else "user line without text"
        if _NOT_A_PROMPT.match(text):
            return "slash command or interruption"
        agent = self._subagent(record)
        if agent is None:
            out.append(self._envelope(line, record, "prompt_submit", {"prompt": clip(text)}))
            return None
        if record.get("parentUuid") is None or not self.subagents.started(agent):
            task = self._envelope(line, record, "", {"agent_id": agent, "task": clip(text)})
            out.extend(self.subagents.start(agent, task))
            return None
        return "subagent prompt"

    def _result(self, line: JsonLine, record: dict, block: dict, out: list) -> bool:
        tool_use_id = block.get("tool_use_id")
        call = self.calls.pop(tool_use_id, None) if isinstance(tool_use_id, str) else None
        if call is None:
            return False
        data: dict[str, Any] = {
            "tool_name": call.name,
            "tool_input": call.input,
            "tool_use_id": tool_use_id,
        }
        if call.agent is not None:
            data["agent_id"] = call.agent
        output = clip(_text(block.get("content")))
        if block.get("is_error"):
            data["error"] = output
            hook, event = "post_tool_failure", "PostToolUseFailure"
        else:
            data["tool_output"] = output
            hook, event = "post_tool_use", "PostToolUse"
        # The id Claude Code's live hook gives the same call: importing a conversation the
        # hooks already sent adds nothing for it.
        event_id = f"{AGENT}:{event}:{tool_use_id}"
        out.append(self._envelope(line, record, hook, data, event_id=event_id))
        return True

    def _assistant(self, line: JsonLine, record: dict[str, Any], out: list) -> str | None:
        texts: list[str] = []
        called = thought = False
        agent = self._subagent(record)
        for block in content_blocks(_content(record)):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                texts.append(block["text"].strip())
            elif kind == "tool_use" and isinstance(block.get("id"), str):
                name = block.get("name") if isinstance(block.get("name"), str) else "tool"
                self.calls[block["id"]] = _Call(name, clip_strings(block.get("input")), agent)
                called = True
            elif kind in ("thinking", "redacted_thinking"):
                thought = True
        if texts:
            text = clip("\n\n".join(texts))
            if agent is None:
                data = {"assistantResponse": text}
                out.append(self._envelope(line, record, "assistant_response", data))
                return None
            data = {"agent_id": agent, "last_assistant_message": text}
            self.subagents.said(agent, self._envelope(line, record, "", data))
            return "subagent message (its last one is kept)"
        if called:
            return None  # imported with its result
        return "thinking" if thought else "assistant line without text"

    def _system(self, line: JsonLine, record: dict[str, Any]) -> str | None:
        subtype = record.get("subtype")
        if subtype != "compact_boundary":
            return f"system: {subtype}" if subtype else "system"
        meta = record.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        data = {key: meta[key] for key in ("trigger", "preTokens") if key in meta}
        self.compaction = self._envelope(line, record, "pre_compact", data)
        return None  # sent with the summary that follows it

    # -- envelopes -------------------------------------------------------------------------

    def _subagent(self, record: dict[str, Any]) -> str | None:
        """Which subagent wrote the line, or None for the main conversation."""
        if self.agent is None and not record.get("isSidechain"):
            return None
        agent = record.get("agentId")
        return agent if isinstance(agent, str) and agent else self.agent or "sidechain"

    def _envelope(
        self,
        line: JsonLine,
        record: dict[str, Any],
        hook: str,
        data: dict[str, Any],
        *,
        event_id: str | None = None,
    ) -> dict[str, Any]:
        cwd = record.get("cwd")
        if isinstance(cwd, str) and cwd:
            self.cwd = cwd
        session = record.get("sessionId")
        timestamp = record.get("timestamp")
        if event_id is None:
            uuid = record.get("uuid")
            event_id = (
                uuid if isinstance(uuid, str) and uuid else f"{self.path.stem}:{line.number - 1}"
            )
        return {
            "hookType": hook,
            "sessionId": session if isinstance(session, str) and session else self.session,
            "project": self.project or project_name(self.cwd),
            "cwd": self.cwd,
            "timestamp": timestamp if isinstance(timestamp, str) else self.clock.tick(),
            "agentId": AGENT,
            "eventId": event_id,
            "data": data,
        }


def session_in(path: Path, *, lines: int = 50) -> str:
    """The session a file holds: the first ``sessionId`` among its first lines, else
    the one its name gives."""
    try:
        for line, _ in zip(json_lines(path), range(lines), strict=False):
            session = line.record.get("sessionId") if line.record else None
            if isinstance(session, str) and session:
                return session
    except OSError:
        pass
    return session_of(path)


def session_of(path: Path) -> str:
    """The session a file belongs to, by its name: ``<session>.jsonl``, or
    ``<session>/subagents/agent-<id>.jsonl``. (An older ``agent-<id>.jsonl`` beside the
    sessions does not say; its lines do.)"""
    if path.parent.name == "subagents":
        return path.parent.parent.name
    return path.stem


def _agent_of(path: Path) -> str | None:
    """A subagent's own file: ``subagents/agent-<id>.jsonl``, or ``agent-<id>.jsonl`` beside
    the sessions in older versions."""
    if path.parent.name == "subagents" or path.stem.startswith("agent-"):
        return path.stem.removeprefix("agent-")
    return None


def _content(record: dict[str, Any]) -> Any:
    message = record.get("message")
    return message.get("content") if isinstance(message, dict) else None


def _text(content: Any) -> str:
    """What a message or tool result said, as text; images are named, not copied."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content_blocks(content):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "image":
            parts.append("[image]")
    return "\n".join(parts)
