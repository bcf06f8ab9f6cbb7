"""Claude-style hooks: Claude Code, and Codex CLI and Gemini CLI, which copied its format.

PascalCase ``hook_event_name``, ``session_id`` and ``cwd`` in every payload; context goes
back as ``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`` on the events
that take it, and nothing is printed otherwise (no permission decisions: memvault has none
to make). The three hosts differ in event names and in where they take context; each is one
``ClaudeStyle`` below.

Cursor also runs the Claude Code hooks it finds in ``~/.claude/settings.json``, with its own
payloads. Its own hooks already record those events, so the Claude Code hook does nothing
with what Cursor sent (``from_cursor``).
"""

from __future__ import annotations

import os

from memvault.hook.envelope import (
    READ_FILES,
    READ_SESSION,
    Translation,
    kept,
    prompt,
    snake,
    stripped,
)

TYPE_CHECKING = False  # typing is not imported at run time: the hook pays for every module
if TYPE_CHECKING:
    from collections.abc import Mapping

IDENTITY = ("session_id",)
# Fields only Cursor's payloads carry (every Cursor event has ``conversation_id``).
CURSOR_FIELDS = ("cursor_version", "conversation_id", "workspace_roots", "generation_id")
# What Claude Code puts in the environment of every process it runs.
CLAUDE_CODE_ENVIRONMENT = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")
_TOOL_EVENTS = frozenset({"pre_tool_use", "post_tool_use", "post_tool_failure"})

CLAUDE_EVENTS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt_submit",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_failure",
    "PermissionRequest": "permission_request",
    "Notification": "notification",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "TaskCompleted": "task_completed",
    "Stop": "stop",
    "StopFailure": "stop_failure",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
    "SessionEnd": "session_end",
}
GEMINI_EVENTS = {
    "SessionStart": "session_start",
    "BeforeAgent": "prompt_submit",
    "AfterAgent": "stop",
    "BeforeTool": "pre_tool_use",
    "AfterTool": "post_tool_use",
    "PreCompress": "pre_compact",
    "Notification": "notification",
    "SessionEnd": "session_end",
}
# Gemini's model hooks carry whole model requests and responses, several per turn: what
# they say reaches memory through the agent and tool events.
GEMINI_SKIPPED = frozenset({"BeforeModel", "AfterModel", "BeforeToolSelection"})
# The host's word for a field → the envelope's.
RENAMES = {
    "post_tool_use": {"tool_response": "tool_output"},
    "subagent_stop": {"last_assistant_message": "last_message"},
}
GEMINI_RENAMES = {
    **RENAMES,
    "stop": {"prompt_response": "last_assistant_message"},
}


class ClaudeStyle:
    """One Claude-style host: its event names, renames, and where it takes context."""

    def __init__(
        self,
        name: str,
        events: Mapping[str, str],
        *,
        session_context: bool,
        prompt_context: bool,
        renames: Mapping[str, Mapping[str, str]] = RENAMES,
        skipped: frozenset[str] = frozenset(),
        defers_to_cursor: bool = False,
        file_context: bool = False,
    ) -> None:
        self.name = name
        self.events = events
        self.session_context = session_context
        self.prompt_context = prompt_context
        self.renames = renames
        self.skipped = skipped
        self.defers_to_cursor = defers_to_cursor
        self.file_context = file_context
        # Every Claude-style host appends each message to ``transcript_path``.
        self.transcript_grows = True

    @staticmethod
    def event_name(payload: Mapping[str, object]) -> str:
        return stripped(payload.get("hook_event_name"))

    @staticmethod
    def session_id(payload: Mapping[str, object]) -> str:
        return stripped(payload.get("session_id"))

    @staticmethod
    def workspace(payload: Mapping[str, object], environ: Mapping[str, str]) -> str:
        return (
            stripped(payload.get("cwd"))
            or environ.get("CLAUDE_PROJECT_DIR", "").strip()
            or os.getcwd()
        )

    def translate(
        self, event: str, payload: Mapping[str, object], environ: Mapping[str, str]
    ) -> Translation | None:
        """The event in the envelope's terms, or None when it is not recorded."""
        if event in self.skipped or (self.defers_to_cursor and from_cursor(payload, environ)):
            return None
        hook_type = self.events.get(event) or snake(event)
        data = kept(payload, IDENTITY, rename=self.renames.get(hook_type))
        if hook_type == "prompt_submit":
            return prompt(data, injects=self.prompt_context)
        if hook_type == "session_start":
            return Translation(hook_type, data, read=READ_SESSION if self.session_context else None)
        if hook_type == "post_tool_use" and _failed(data.get("tool_output")):
            hook_type = "post_tool_failure"  # Gemini reports a failed tool in AfterTool
            data["error"] = data["tool_output"]["error"]
        key = payload.get("tool_use_id") if hook_type in _TOOL_EVENTS else None
        # Before a tool touches files, what memory says about them (past errors, lessons).
        read = READ_FILES if self.file_context and hook_type == "pre_tool_use" else None
        return Translation(hook_type, data, key=key, read=read)

    def answer(self, event: str, payload: Mapping[str, object], context: str | None) -> dict | None:
        if not context:
            return None
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}


def from_cursor(payload: Mapping[str, object], environ: Mapping[str, str]) -> bool:
    """Whether Cursor ran this Claude Code hook: its payload has a field only Cursor sends,
    or Cursor's hook environment (``CURSOR_VERSION``) is there without Claude Code's own.

    Claude Code sets ``CLAUDECODE`` and ``CLAUDE_CODE_ENTRYPOINT`` for everything it runs;
    a ``claude`` started in Cursor's terminal may inherit ``CURSOR_VERSION`` too, and its
    hooks are Claude Code's own, to be recorded."""
    if any(key in payload for key in CURSOR_FIELDS):
        return True
    if not environ.get("CURSOR_VERSION", "").strip():
        return False
    return not any(environ.get(name) for name in CLAUDE_CODE_ENVIRONMENT)


def _failed(output: object) -> bool:
    return isinstance(output, dict) and bool(output.get("error"))


CLAUDE_CODE = ClaudeStyle(
    "claude-code",
    CLAUDE_EVENTS,
    session_context=True,
    prompt_context=True,
    defers_to_cursor=True,
    file_context=True,
)
# Codex takes additionalContext at SessionStart but not at UserPromptSubmit.
CODEX = ClaudeStyle("codex", CLAUDE_EVENTS, session_context=True, prompt_context=False)
# Gemini takes it at BeforeAgent (its prompt event); SessionStart is not documented to.
GEMINI = ClaudeStyle(
    "gemini",
    GEMINI_EVENTS,
    session_context=False,
    prompt_context=True,
    renames=GEMINI_RENAMES,
    skipped=GEMINI_SKIPPED,
)
