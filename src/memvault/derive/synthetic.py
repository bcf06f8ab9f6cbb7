"""Synthetic compression: a readable observation from one event, with no LLM.

Every event gets one at ingest, so memory is searchable from the first second. An LLM may
later upgrade it in place; the raw event stays as it was.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from memvault import jsontext
from memvault.derive.shell import written_files
from memvault.domain import ObservationDraft

TITLE_LIMIT = 80
NARRATIVE_LIMIT = 400

# Words of a tool name → observation type, checked in order ("TodoWrite" is planning).
_TOOL_TYPES: tuple[tuple[frozenset[str], str], ...] = tuple(
    (frozenset(words.split()), kind)
    for words, kind in (
        ("todo todos plan", "planning"),
        ("fetch web http https browse browser url curl", "web_fetch"),
        # An edit before a search: Cursor's ``search_replace`` changes a file.
        ("edit edits patch replace apply multiedit", "file_edit"),
        ("grep search glob find codebase ripgrep rg", "search"),
        ("bash shell exec terminal command cmd run sh", "command_run"),
        ("write create notebook save", "file_write"),
        ("read view cat open ls list dir lints", "file_read"),
        ("delete remove rm unlink", "file_delete"),
        ("task agent subagent", "subagent"),
    )
)
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")

_TYPE_IMPORTANCE = {
    "file_edit": 6,
    "file_write": 6,
    "file_delete": 6,
    "command_run": 5,
    "web_fetch": 4,
    "mcp_call": 4,
    "subagent": 4,
    "planning": 4,
    "search": 3,
    "file_read": 3,
    "tool": 4,
    "host_internal": 0,
}

_FILE_KEYS = ("file_path", "filePath", "path", "file", "notebook_path", "target_file")


# Tools a host calls for itself (finding its deferred tools, waiting for MCP servers to
# connect): not work the session did, so no step of its summary and no fragment.
HOST_INTERNAL_TOOLS = frozenset({"ToolSearch", "WaitForMcpServers"})


@functools.lru_cache(maxsize=1024)
def infer_tool_type(tool_name: str) -> str:
    if tool_name in HOST_INTERNAL_TOOLS:
        return "host_internal"
    if tool_name.lower().startswith("mcp"):
        return "mcp_call"
    words = {word.lower() for word in _WORDS.findall(tool_name)}
    for vocabulary, kind in _TOOL_TYPES:
        if words & vocabulary:
            return kind
    return "tool"


def compress(hook_type: str, data: Any) -> ObservationDraft:
    """Derive the synthetic observation for one (already redacted) event."""
    fields = data if isinstance(data, dict) else {"value": data}
    builder = _BUILDERS.get(hook_type, _other)
    kind, title, narrative, facts, importance = builder(hook_type, fields)
    return ObservationDraft(
        type=kind,
        title=_clip(_one_line(title), TITLE_LIMIT) or hook_type,
        narrative=_clip(narrative.strip(), NARRATIVE_LIMIT),
        facts=facts,
        files=_files(fields),
        concepts=[],
        importance=importance,
    )


def whole_text(hook_type: str, data: Any) -> str:
    """What an event says, whole: the text its observation's narrative is clipped from (a
    prompt, a reply, a tool's input and output), for search to read all of it."""
    fields = data if isinstance(data, dict) else {"value": data}
    return _BUILDERS.get(hook_type, _other)(hook_type, fields)[2].strip()


Built = tuple[str, str, str, list[str], int]


def _prompt(_: str, d: dict) -> Built:
    text = _text(d.get("prompt") or d.get("userPrompt") or d.get("text"))
    return "conversation", f"Prompt: {text}", text, [], 6


def _assistant(_: str, d: dict) -> Built:
    text = _text(d.get("assistantResponse") or d.get("response") or d.get("text"))
    return "conversation", f"Response: {text}", text, [], 5


def _tool(hook_type: str, d: dict) -> Built:
    tool = _text(d.get("tool_name") or d.get("toolName") or "tool")
    tool_input = d.get("tool_input", d.get("toolInput"))
    target = _target(tool_input)
    kind = infer_tool_type(tool)
    facts = [f"tool: {tool}"]
    if target:
        facts.append(f"{'command' if kind == 'command_run' else 'target'}: {_clip(target, 200)}")
    if hook_type == "pre_tool_use":
        return kind, f"{tool} (about to run): {target}", _text(tool_input), facts, 2
    output = _text(d.get("tool_output", d.get("tool_response", d.get("tool_result"))))
    narrative = " | ".join(part for part in (_text(tool_input), output) if part)
    return kind, f"{tool}: {target}" if target else tool, narrative, facts, _TYPE_IMPORTANCE[kind]


def _failure(_: str, d: dict) -> Built:
    tool = _text(d.get("tool_name") or d.get("toolName") or "tool")
    error = _text(d.get("error") or d.get("errorMessage") or d.get("error_message"))
    target = _target(d.get("tool_input", d.get("toolInput")))
    facts = [f"tool: {tool}", f"error: {_clip(error, 200)}"]
    if target:
        facts.insert(1, f"target: {_clip(target, 200)}")
    narrative = " | ".join(part for part in (target, error) if part)
    if tool in HOST_INTERNAL_TOOLS:
        return "host_internal", f"{tool} failed: {error}", narrative, facts, 0
    return "error", f"{tool} failed: {error}", narrative, facts, 7


def _subagent(hook_type: str, d: dict) -> Built:
    agent = _text(d.get("agent_type") or d.get("subagent_type") or d.get("agent_id") or "agent")
    if hook_type == "subagent_start":
        task = _text(d.get("task") or d.get("prompt") or d.get("description"))
        return "subagent", f"Subagent started: {agent}", task, [f"subagent: {agent}"], 3
    last = _text(d.get("last_message") or d.get("summary") or d.get("last_assistant_message"))
    return "subagent", f"Subagent finished: {agent}", last, [f"subagent: {agent}"], 5


def _session_start(_: str, d: dict) -> Built:
    source = _text(d.get("source"))
    return "session", f"Session started ({source})" if source else "Session started", "", [], 2


def _session_end(_: str, d: dict) -> Built:
    reason = _text(d.get("reason"))
    return "session", f"Session ended ({reason})" if reason else "Session ended", "", [], 2


def _stop(_: str, d: dict) -> Built:
    last = _text(d.get("last_assistant_message") or d.get("assistantResponse"))
    return "conversation", f"Turn ended: {last}" if last else "Turn ended", last, [], 4


def _notification(_: str, d: dict) -> Built:
    message = _text(d.get("message") or d.get("title"))
    return "notification", f"Notification: {message}", message, [], 2


def _task(_: str, d: dict) -> Built:
    subject = _text(d.get("task_subject") or d.get("task_id"))
    description = _text(d.get("task_description"))
    return "task", f"Task completed: {subject}", description, [], 6


def _compact(_: str, d: dict) -> Built:
    trigger = _text(d.get("trigger"))
    title = f"Context compaction ({trigger})" if trigger else "Context compaction"
    return "session", title, _text(d.get("custom_instructions")), [], 3


def _injected(_: str, d: dict) -> Built:
    # memvault's record of a memory block it gave the agent: bookkeeping, like the host's.
    items = [i for i in d.get("items") or [] if isinstance(i, dict) and i.get("kind") != "report"]
    given = "; ".join(f"{_text(i.get('kind'))} {_text(i.get('id'))}" for i in items)
    title = f"Memory given ({_text(d.get('answered'))}): {len(items)} memories"
    return "host_internal", title, given, [], 0


def _other(hook_type: str, d: dict) -> Built:
    return "other", hook_type.replace("_", " "), _text(d), [], 3


_BUILDERS = {
    "prompt_submit": _prompt,
    "assistant_response": _assistant,
    "pre_tool_use": _tool,
    "post_tool_use": _tool,
    "post_tool_failure": _failure,
    "subagent_start": _subagent,
    "subagent_stop": _subagent,
    "session_start": _session_start,
    "session_end": _session_end,
    "stop": _stop,
    "notification": _notification,
    "task_completed": _task,
    "pre_compact": _compact,
    "context_injected": _injected,
}


def _target(tool_input: Any) -> str:
    """The one thing a tool call is about: its command, file, pattern, URL or query."""
    if isinstance(tool_input, str):
        try:
            tool_input = json.loads(tool_input)
        except ValueError:
            return _one_line(tool_input)
    if not isinstance(tool_input, dict):
        return ""
    for key in ("command", *_FILE_KEYS, "pattern", "url", "query", "description"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return _one_line(value)
    return ""


def _files(d: dict) -> list[str]:
    found: list[str] = []
    tool_input = d.get("tool_input", d.get("toolInput"))
    if isinstance(tool_input, str):
        try:
            tool_input = json.loads(tool_input)
        except ValueError:
            tool_input = None
    candidates: list[Any] = []
    if isinstance(tool_input, dict):
        candidates += [tool_input.get(key) for key in _FILE_KEYS]
        for edit in tool_input.get("edits") or []:
            if isinstance(edit, dict):
                candidates += [edit.get(key) for key in _FILE_KEYS]
    candidates += [d.get(key) for key in _FILE_KEYS]
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    tool = d.get("tool_name") or d.get("toolName")
    if (
        isinstance(command, str)
        and isinstance(tool, str)
        and infer_tool_type(tool) == "command_run"
    ):
        candidates += written_files(command)  # echo … > note.txt, cp, mv, touch, mkdir …
    files = d.get("files")
    if isinstance(files, list):
        candidates += files
    for value in candidates:
        if isinstance(value, str) and value.strip() and value not in found:
            found.append(value.strip())
    return found[:20]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return jsontext.dumps(value)[: NARRATIVE_LIMIT * 2]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
