"""Cursor's own hooks (``~/.cursor/hooks.json``): camelCase events, flat snake_case answers.

Every event Cursor documents is recorded, with one exception: agent thoughts are skipped
unless ``MEMVAULT_CAPTURE_THOUGHTS=1`` (they are drafts of what the response then says).
Events this module does not know are stored under their own name, as sent. Shell, MCP and
file hooks become the tool events they are, named the way Cursor's matchers name them
(``Shell``, ``MCP:<tool>``, ``Read``, ``Edit``).
"""

from __future__ import annotations

import json
import os
import re

from memvault.hook.envelope import READ_SESSION, Translation, kept, prompt, snake, stripped

TYPE_CHECKING = False  # typing is not imported at run time: the hook pays for every module
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    Build = Callable[[Mapping[str, object]], Translation]

IDENTITY = ("conversation_id", "session_id")
# The CLI takes `additional_context` from beforeSubmitPrompt from this build on; the IDE
# does not take it there at all.
PROMPT_CONTEXT_SINCE = "2026.09.18"
_CLI_BUILD = re.compile(r"^(\d{4}\.\d{2}\.\d{2})-[0-9a-f]+$")


class Cursor:
    name = "cursor"
    # Cursor writes its transcript in checkpoints, minutes behind, and often not at all:
    # its size does not tell one moment of a turn from the next.
    transcript_grows = False

    @staticmethod
    def event_name(payload: Mapping[str, object]) -> str:
        return stripped(payload.get("hook_event_name"))

    @staticmethod
    def session_id(payload: Mapping[str, object]) -> str:
        return stripped(payload.get("conversation_id")) or stripped(payload.get("session_id"))

    @staticmethod
    def workspace(payload: Mapping[str, object], environ: Mapping[str, str]) -> str:
        """The workspace root: the session's folder (a tool's ``cwd`` is often empty, or a
        subfolder)."""
        roots = payload.get("workspace_roots")
        for root in roots if isinstance(roots, list) else ():
            if stripped(root):
                return root
        return (
            stripped(payload.get("cwd"))
            or environ.get("CURSOR_PROJECT_DIR", "").strip()
            or environ.get("CLAUDE_PROJECT_DIR", "").strip()
            or os.getcwd()
        )

    @staticmethod
    def translate(
        event: str, payload: Mapping[str, object], environ: Mapping[str, str]
    ) -> Translation | None:
        """The event in the envelope's terms, or None when it is not recorded."""
        if event == "afterAgentThought" and environ.get("MEMVAULT_CAPTURE_THOUGHTS") != "1":
            return None
        build = _EVENTS.get(event)
        if build is None:
            return Translation(snake(event), kept(payload, IDENTITY))
        return build(payload)

    @staticmethod
    def answer(event: str, payload: Mapping[str, object], context: str | None) -> dict | None:
        """What Cursor reads on stdout: continue on prompts, the memory block where Cursor
        takes one; nothing otherwise. Nothing is also the answer to a permission hook: Cursor
        ignores it, so memvault never stands in for the user's approval."""
        if event == "beforeSubmitPrompt":
            if context:
                return {"continue": True, "additional_context": context}
            return {"continue": True}
        if event == "sessionStart" and context:
            return {"additional_context": context}
        return None


def takes_prompt_context(version: object) -> bool:
    build = _CLI_BUILD.match(version) if isinstance(version, str) else None
    return build is not None and build.group(1) >= PROMPT_CONTEXT_SINCE


def _session_start(payload: Mapping[str, object]) -> Translation:
    return Translation("session_start", kept(payload, IDENTITY), read=READ_SESSION)


def _prompt(payload: Mapping[str, object]) -> Translation:
    injects = takes_prompt_context(payload.get("cursor_version"))
    return prompt(kept(payload, IDENTITY), injects=injects)


def _tool(hook_type: str, **rename: str) -> Build:
    def build(payload: Mapping[str, object]) -> Translation:
        data = kept(payload, IDENTITY, rename=rename)
        return Translation(hook_type, data, key=payload.get("tool_use_id"))

    return build


def _shell(hook_type: str) -> Build:
    def build(payload: Mapping[str, object]) -> Translation:
        data = kept(payload, IDENTITY, drop=("command", "cwd"), rename={"output": "tool_output"})
        tool_input = {"command": payload.get("command")}
        if stripped(payload.get("cwd")):
            tool_input["cwd"] = payload["cwd"]
        return Translation(hook_type, {"tool_name": "Shell", "tool_input": tool_input, **data})

    return build


def _mcp(hook_type: str) -> Build:
    def build(payload: Mapping[str, object]) -> Translation:
        data = kept(payload, IDENTITY, rename={"result_json": "tool_output"})
        data["tool_name"] = f"MCP:{stripped(payload.get('tool_name')) or 'unknown'}"
        data["tool_input"] = _json_or_text(payload.get("tool_input"))
        return Translation(hook_type, data)

    return build


def _read_file(payload: Mapping[str, object]) -> Translation:
    data = kept(payload, IDENTITY, drop=("file_path", "content"))
    content = payload.get("content")
    if isinstance(content, str):
        data["content_length"] = len(content)  # the file itself is not the session's record
    tool_input = {"file_path": payload.get("file_path")}
    return Translation("pre_tool_use", {"tool_name": "Read", "tool_input": tool_input, **data})


def _file_edit(payload: Mapping[str, object]) -> Translation:
    data = kept(payload, IDENTITY, drop=("file_path", "edits"))
    tool_input = {"file_path": payload.get("file_path"), "edits": payload.get("edits")}
    return Translation("post_tool_use", {"tool_name": "Edit", "tool_input": tool_input, **data})


def _plain(hook_type: str, **rename: str) -> Build:
    def build(payload: Mapping[str, object]) -> Translation:
        return Translation(hook_type, kept(payload, IDENTITY, rename=rename))

    return build


def _json_or_text(value: object) -> object:
    """Cursor sends MCP tool input as a JSON string; an object reads better."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


_EVENTS: dict[str, Build] = {
    "sessionStart": _session_start,
    "sessionEnd": _plain("session_end"),
    "beforeSubmitPrompt": _prompt,
    "preToolUse": _tool("pre_tool_use"),
    "postToolUse": _tool("post_tool_use"),
    "postToolUseFailure": _tool("post_tool_failure", error_message="error"),
    "beforeShellExecution": _shell("pre_tool_use"),
    "afterShellExecution": _shell("post_tool_use"),
    "beforeMCPExecution": _mcp("pre_tool_use"),
    "afterMCPExecution": _mcp("post_tool_use"),
    "beforeReadFile": _read_file,
    "afterFileEdit": _file_edit,
    "subagentStart": _plain("subagent_start"),
    "subagentStop": _plain("subagent_stop"),
    "afterAgentResponse": _plain("assistant_response", text="assistantResponse"),
    "afterAgentThought": _plain("agent_thought"),
    "preCompact": _plain("pre_compact"),
    "stop": _plain("stop"),
}
