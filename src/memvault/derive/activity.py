"""A session's captured events read as steps: who said what, which tool did what to which
file, and whether it failed.

Observations carry the type and files (possibly upgraded by an LLM); raw events carry the
full text, which observations clip. Both are joined by event sequence number, so either
may be passed alone.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memvault.derive import cues
from memvault.derive.synthetic import compress
from memvault.domain import Event, Observation

PROMPT = "prompt"
RESPONSE = "response"
TOOL = "tool"
FAILURE = "failure"
OTHER = "other"

CHANGE_TYPES = frozenset({"file_edit", "file_write", "file_delete"})
READ_TYPES = frozenset({"file_read"})

_RESPONSE_HOOKS = frozenset({"assistant_response", "stop", "subagent_stop", "task_completed"})
_SKIPPED_HOOKS = frozenset(
    {"pre_tool_use", "session_start", "session_end", "notification", "context_injected"}
)
# A host telling the agent the user refused a tool call: a choice, not a failure to learn from.
_REJECTED = re.compile(
    r"doesn't want to proceed|tool use was rejected|user denied|denied by (?:the )?user", re.I
)


@dataclass(frozen=True, slots=True)
class Step:
    seq: int
    event_id: str  # the client's event id, or "seq-<n>" for events sent without one
    session_id: str
    occurred_at: str
    role: str  # prompt | response | tool | failure | other
    type: str  # the observation type: file_edit, command_run, conversation, error…
    text: str  # what was said; for a tool, its output; for a failure, the error
    command: str = ""  # for a command: what ran
    target: str = ""  # for a search or a web tool: the query, pattern or URL
    files: tuple[str, ...] = ()
    rejected: bool = False  # the user refused the tool call

    @property
    def openers(self) -> frozenset[str]:
        """The sentences that may direct a choice plainly (``cues.openers``): a prompt's
        opening ones, none of anything else."""
        return cues.openers(self.text) if self.role == PROMPT else frozenset()

    @property
    def changes_files(self) -> bool:
        # A command's files are the ones its command line writes (derive/shell.py).
        return self.role == TOOL and (
            self.type in CHANGE_TYPES or (self.type == "command_run" and bool(self.files))
        )


def records_changes(session: Sequence[Step]) -> bool:
    """Whether a session records its changes: any edit, even one that failed or was
    refused. A history exported without its edits (a chat exported as text) records
    none, and what its replies report changing is all there is (``derive.reported``); a
    session that records them changed nothing its records do not show."""
    return any(
        s.changes_files
        or (s.role in (TOOL, FAILURE) and s.type in CHANGE_TYPES)
        or (s.role == FAILURE and bool(s.files))
        for s in session
    )


def steps(events: Sequence[Event], observations: Sequence[Observation]) -> list[Step]:
    """The session's steps in the order things happened."""
    pairs: dict[int, tuple[Event | None, Observation | None]] = {}
    for event in events:
        pairs[event.seq] = (event, None)
    for observation in observations:
        pairs[observation.event_seq] = (
            pairs.get(observation.event_seq, (None, None))[0],
            observation,
        )
    found = []
    for seq in sorted(pairs, key=lambda s: (_source(*pairs[s]).occurred_at, s)):
        step = _step(seq, *pairs[seq])
        if step is not None:
            found.append(step)
    return found


def _source(event: Event | None, observation: Observation | None) -> Event | Observation:
    """The row a step's identity comes from: the event, or its observation alone."""
    source = event if event is not None else observation
    if source is None:
        raise ValueError("a step needs an event or an observation")
    return source


def _step(seq: int, event: Event | None, observation: Observation | None) -> Step | None:
    source = _source(event, observation)
    hook = source.hook_type
    if hook in _SKIPPED_HOOKS:
        return None
    data = _fields(event.payload) if event is not None else {}
    if observation is None:
        draft = compress(hook, data)
        kind, narrative, files = draft.type, draft.narrative, draft.files
    else:
        kind, narrative, files = observation.type, observation.narrative, observation.files
    if kind == "host_internal":
        return None  # the host's own bookkeeping, not the session's work
    cwd = event.cwd if event is not None else ""
    base = {
        "seq": seq,
        "event_id": source.client_event_id or f"seq-{seq}",
        "session_id": source.session_id,
        "occurred_at": source.occurred_at,
        "type": kind,
        "files": tuple(_relative(path, cwd) for path in files),
    }
    if hook == "prompt_submit":
        text = _text(data, "prompt", "userPrompt", "text") or narrative
        return Step(role=PROMPT, text=text, **base)
    if hook in _RESPONSE_HOOKS:
        keys = ("assistantResponse", "response", "text", "last_assistant_message", "last_message")
        text = _text(data, *keys, "summary", "task_description") or narrative
        return Step(role=RESPONSE, text=text, **base) if text.strip() else None
    if hook in ("post_tool_use", "post_tool_failure"):
        return _tool_step(hook, data, base)
    return Step(role=OTHER, text=narrative, **base)


def _tool_step(hook: str, data: dict, base: dict) -> Step:
    tool_input = _input(data.get("tool_input", data.get("toolInput")))
    command = next(
        (v for v in (tool_input.get("command"), tool_input.get("cmd")) if isinstance(v, str)), ""
    )
    output = data.get("tool_output", data.get("tool_response", data.get("tool_result")))
    error = _text(data, "error", "errorMessage", "error_message", "error_details")
    failed = hook == "post_tool_failure" or _reports_failure(output)
    text = (error if failed else "") or _text({"output": output}, "output")
    target = next(
        (v for k in ("query", "url", "pattern") if isinstance(v := tool_input.get(k), str)), ""
    )
    return Step(
        role=FAILURE if failed else TOOL,
        text=text,
        command=" ".join(command.split()),
        target=" ".join(target.split()),
        rejected=failed and bool(_REJECTED.search(text)),
        **base,
    )


def _reports_failure(output: Any) -> bool:
    """A tool result that says it failed although the host sent it as a success."""
    if isinstance(output, dict):
        if output.get("is_error") is True or output.get("isError") is True:
            return True
        for key in ("exitCode", "exit_code", "returncode"):
            if isinstance(output.get(key), int) and output[key] != 0:
                return True
    return False


def _fields(payload: Any) -> dict:
    return payload if isinstance(payload, dict) else {"value": payload}


def _input(value: Any) -> dict:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {"command": value}
    return value if isinstance(value, dict) else {}


def _text(data: dict, *keys: str) -> str:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, dict | list) and value:
            return _flatten(value)
    return ""


def _flatten(value: Any) -> str:
    """Tool results arrive as strings, content blocks or stdout/stderr objects."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(filter(None, (_flatten(item) for item in value)))
    if isinstance(value, dict):
        for key in ("text", "stdout", "stderr", "content", "output", "message"):
            if isinstance(value.get(key), str | list) and value[key]:
                return _flatten(value[key])
        return json.dumps(value, ensure_ascii=False)[:800]
    return str(value)


def _relative(path: str, cwd: str) -> str:
    """A path as the project knows it: relative to the session's folder when inside it."""
    if cwd and os.path.isabs(path) and os.path.isabs(cwd):
        try:
            relative = os.path.relpath(path, cwd)
        except ValueError:
            return path
        if not relative.startswith(".."):
            return relative
    return path


def command_key(command: str) -> str:
    """What makes two runs the same command: the program and its subcommand, ignoring
    ``cd x &&``, environment assignments and pipes into head/tail."""
    command = command.split("&&")[-1].split("|")[0]
    words = [w for w in command.split() if "=" not in w or w.startswith("-")]
    return " ".join(words[:2])
