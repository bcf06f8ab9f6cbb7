"""Every captured and documented hook payload, through the real hook command and a real server.

Each must arrive as the right event (hook type, session, project, folder, agent, a stable
event id) with the right observation, and the host must read exactly what it expects on
stdout: its JSON answer, or nothing.
"""

from __future__ import annotations

import httpx
import pytest

from tests.hooks.runner import (
    answer,
    fixture_payloads,
    hook_env,
    placed,
    run_hook,
    session_of,
    stored,
)


class Contains(str):
    """Equal to any string that contains it: for the parts of an answer that vary."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and str(self) in other

    __hash__ = str.__hash__


SESSION_ID = Contains("Your Memory Session ID is: ")
MEMORY = Contains("📖 agent memory")


def hook_specific(event: str, context: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}


# (host, event) → hook type, the observation's title (its start), what the host reads.
EXPECTED = {
    ("cursor", "sessionStart"): (
        "session_start",
        "Session started",
        {"additional_context": SESSION_ID},
    ),
    ("cursor", "sessionEnd"): ("session_end", "Session ended (", None),
    ("cursor", "beforeSubmitPrompt"): ("prompt_submit", "Prompt: ", {"continue": True}),
    ("cursor", "preToolUse"): ("pre_tool_use", "Shell (about to run): echo HELLO", None),
    ("cursor", "postToolUse"): ("post_tool_use", "Shell", None),
    ("cursor", "postToolUseFailure"): ("post_tool_failure", "Shell failed: cat: ", None),
    ("cursor", "stop"): ("stop", "Turn ended", None),
    ("cursor", "afterFileEdit"): ("post_tool_use", "Edit: /Users/", None),
    ("cursor", "beforeShellExecution"): ("pre_tool_use", "Shell (about to run): ", None),
    ("cursor", "afterShellExecution"): ("post_tool_use", "Shell: npm test", None),
    ("cursor", "beforeMCPExecution"): (
        "pre_tool_use",
        "MCP:memory_search (about to run): api naming",
        None,
    ),
    ("cursor", "afterMCPExecution"): ("post_tool_use", "MCP:memory_search: api naming", None),
    ("cursor", "beforeReadFile"): ("pre_tool_use", "Read (about to run): /Users/dev", None),
    ("cursor", "afterAgentResponse"): ("assistant_response", "Response: Renamed getUser", None),
    ("cursor", "afterAgentThought"): (None, None, None),  # skipped by default
    ("cursor", "subagentStart"): ("subagent_start", "Subagent started: generalPurpose", None),
    ("cursor", "subagentStop"): ("subagent_stop", "Subagent finished: generalPurpose", None),
    ("cursor", "preCompact"): ("pre_compact", "Context compaction (auto)", None),
    ("claude-code", "SessionStart"): (
        "session_start",
        "Session started (startup)",
        hook_specific("SessionStart", SESSION_ID),
    ),
    ("claude-code", "UserPromptSubmit"): (
        "prompt_submit",
        "Prompt: Run exactly this shell command",
        hook_specific("UserPromptSubmit", MEMORY),
    ),
    ("claude-code", "PreToolUse"): ("pre_tool_use", "Bash (about to run): echo hello", None),
    ("claude-code", "PostToolUse"): ("post_tool_use", "Bash", None),
    ("claude-code", "PostToolUseFailure"): (
        "post_tool_failure",
        "Bash failed: Command exited with non-zero status code 1",
        None,
    ),
    ("claude-code", "PermissionRequest"): ("permission_request", "permission request", None),
    ("claude-code", "Notification"): (
        "notification",
        "Notification: Claude needs your permission",
        None,
    ),
    ("claude-code", "SubagentStart"): ("subagent_start", "Subagent started: Explore", None),
    ("claude-code", "SubagentStop"): (
        "subagent_stop",
        "Subagent finished: general-purpose",
        None,
    ),
    ("claude-code", "Stop"): ("stop", "Turn ended: Done.", None),
    ("claude-code", "StopFailure"): ("stop_failure", "stop failure", None),
    ("claude-code", "PreCompact"): ("pre_compact", "Context compaction (manual)", None),
    ("claude-code", "InstructionsLoaded"): ("instructions_loaded", "instructions loaded", None),
    ("claude-code", "SessionEnd"): ("session_end", "Session ended (", None),
    ("codex", "SessionStart"): (
        "session_start",
        "Session started (startup)",
        hook_specific("SessionStart", SESSION_ID),
    ),
    ("codex", "UserPromptSubmit"): ("prompt_submit", "Prompt: Reply with exactly: OK", None),
    ("codex", "SessionEnd"): ("session_end", "Session ended (other)", None),
    ("codex", "PreToolUse"): ("pre_tool_use", "Bash (about to run): echo hello", None),
    ("codex", "PostToolUse"): ("post_tool_use", "Bash: echo hello-from-tma", None),
    ("codex", "PermissionRequest"): ("permission_request", "permission request", None),
    ("codex", "Stop"): ("stop", "Turn ended: hello-from-tma", None),
    ("gemini", "SessionStart"): ("session_start", "Session started (startup)", None),
    ("gemini", "BeforeAgent"): (
        "prompt_submit",
        "Prompt: Run the shell command: echo hello",
        hook_specific("BeforeAgent", MEMORY),
    ),
    ("gemini", "BeforeTool"): ("pre_tool_use", "run_shell_command (about to run): echo", None),
    ("gemini", "AfterTool"): ("post_tool_use", "run_shell_command: echo hello-from-tma", None),
    ("gemini", "AfterAgent"): ("stop", "Turn ended: hello-from-tma", None),
    ("gemini", "SessionEnd"): ("session_end", "Session ended (exit)", None),
    ("gemini", "Notification"): (
        "notification",
        "Notification: Tool Confirm Shell Command requires execution",
        None,
    ),
}

CASES = [
    pytest.param(host, payload, id=f"{host}/{where}")
    for host in ("cursor", "claude-code", "codex", "gemini")
    for where, payload in fixture_payloads(host)
]


def test_every_fixture_event_has_an_expectation():
    events = {(case.values[0], case.values[1]["hook_event_name"]) for case in CASES}
    assert events == set(EXPECTED)


@pytest.mark.parametrize(("host", "payload"), CASES)
def test_fixture_payload_is_recorded_and_answered(host, payload, server, project):
    sent = placed(payload, project)
    event = sent["hook_event_name"]
    hook_type, title, expected_answer = EXPECTED[(host, event)]

    result = run_hook(host, sent, hook_env(server.home, server.url), cwd=project)

    assert answer(result) == expected_answer
    assert result.stderr == b""
    events = stored(server.home, session_of(sent))
    if hook_type is None:
        assert events == []
        return
    (stored_event,) = events
    assert stored_event.hook_type == hook_type
    assert stored_event.agent_id == host
    assert stored_event.project == "demo-app"
    assert stored_event.cwd == str(project)
    assert stored_event.client_event_id.startswith(f"{host}:{event}:")
    assert "user_email" not in stored_event.payload
    assert stored_event.payload["hook_event_name"] == event
    if "timestamp" in payload:
        assert stored_event.client_timestamp == payload["timestamp"]
    with_title = _observation_title(server, session_of(sent))
    assert with_title.startswith(title), with_title


def _observation_title(server, session_id: str) -> str:
    response = httpx.get(
        f"{server.url}/agentmemory/observations", params={"sessionId": session_id}, timeout=10
    )
    # The hook's event, not the server's record of the memory block it answered with.
    (observation,) = [o for o in response.json()["observations"] if o["type"] != "host_internal"]
    return observation["title"]
