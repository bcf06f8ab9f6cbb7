"""agentmemory's published hook scripts, run with node against a memvault server.

The scripts come from the npm package ``@agentmemory/agentmemory@0.9.29`` (fetched at test
time, never committed); the payloads are real Claude Code hook captures from the shared
fixtures. Whatever the scripts send must arrive as the right observations.
"""

from __future__ import annotations

import json
import subprocess
import uuid

import httpx
import pytest

from tests.helpers import agentmemory_package, fixtures_dir, require_tool, wait_for

SCRIPTS = {
    "SessionStart": "session-start.mjs",
    "UserPromptSubmit": "prompt-submit.mjs",
    "PreToolUse": None,  # agentmemory only calls /enrich here, and only when injecting
    "PostToolUse": "post-tool-use.mjs",
    "PostToolUseFailure": "post-tool-failure.mjs",
    "SubagentStart": "subagent-start.mjs",
    "SubagentStop": "subagent-stop.mjs",
    "Notification": "notification.mjs",
    "Stop": "stop.mjs",
    "SessionEnd": "session-end.mjs",
}


@pytest.fixture(scope="module")
def scripts():
    return agentmemory_package() / "plugin" / "scripts"


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "demo-app"
    folder.mkdir()
    return folder


def payloads() -> list[dict]:
    folder = fixtures_dir() / "claude-code" / "hooks"
    found = []
    for name in ("tmux-agents-captures.jsonl", "docs-examples.jsonl"):
        for line in (folder / name).read_text().splitlines():
            if line.strip():
                found.append(json.loads(line))
    return found


def run_hook(scripts, payload: dict, server, project, **env) -> subprocess.CompletedProcess:
    node = require_tool("node")
    script = SCRIPTS[payload["hook_event_name"]]
    return subprocess.run(
        [node, str(scripts / script)],
        input=json.dumps(payload),
        text=True,
        capture_output=True,
        cwd=project,
        env={"PATH": "/usr/bin:/bin:/usr/local/bin", "AGENTMEMORY_URL": server.url, **env},
        timeout=30,
        check=True,
    )


def observations(server, session_id: str, headers=None) -> list[dict]:
    response = httpx.get(
        f"{server.url}/agentmemory/observations",
        params={"sessionId": session_id},
        headers=headers or {},
    )
    return response.json()["observations"]


def test_every_captured_claude_code_event_arrives_as_the_right_observation(
    scripts, server, project
):
    session_id = f"cc-{uuid.uuid4()}"
    sent = []
    for payload in payloads():
        script = SCRIPTS.get(payload["hook_event_name"])
        if script is None or payload["hook_event_name"] == "SessionEnd":
            continue
        payload = {**payload, "session_id": session_id, "cwd": str(project)}
        payload.pop("transcript_path", None)
        run_hook(scripts, payload, server, project)
        sent.append(payload["hook_event_name"])

    expected = {
        ("prompt_submit", "conversation"),
        ("post_tool_use", "command_run"),
        ("post_tool_failure", "error"),
        ("subagent_start", "subagent"),
        ("subagent_stop", "subagent"),
        ("notification", "notification"),
    }

    def arrived():
        got = observations(server, session_id)
        return got if {(o["hookType"], o["type"]) for o in got} >= expected else None

    got = wait_for(arrived)
    by_hook = {o["hookType"]: o for o in got}
    assert by_hook["prompt_submit"]["title"] == (
        "Prompt: Run exactly this shell command and nothing else: echo hello-from-tma"
    )
    assert by_hook["post_tool_use"]["title"] == "Bash"
    assert "hello-from-tma" in by_hook["post_tool_use"]["narrative"]
    assert by_hook["post_tool_failure"]["title"] == (
        "Bash failed: Command exited with non-zero status code 1"
    )
    assert by_hook["subagent_start"]["title"] == "Subagent started: Explore"
    assert by_hook["subagent_stop"]["title"] == "Subagent finished: general-purpose"
    assert by_hook["notification"]["title"] == "Notification: Claude needs your permission"

    sessions = httpx.get(f"{server.url}/agentmemory/sessions").json()["sessions"]
    session = next(s for s in sessions if s["id"] == session_id)
    assert session["project"] == "demo-app"
    assert session["cwd"] == str(project)
    # Stop posts /session/end, a no-op: the session stays open and takes later events.
    assert session["status"] == "active"
    assert "Stop" in sent and "SessionStart" in sent


def test_session_start_alone_creates_the_session(scripts, server, project):
    session_id = f"cc-{uuid.uuid4()}"
    start = next(p for p in payloads() if p["hook_event_name"] == "SessionStart")
    run_hook(scripts, {**start, "session_id": session_id, "cwd": str(project)}, server, project)

    def created():
        sessions = httpx.get(f"{server.url}/agentmemory/sessions").json()["sessions"]
        return next((s for s in sessions if s["id"] == session_id), None)

    assert wait_for(created)["observationCount"] == 0


def test_session_end_replays_transcript_prompts_as_prompt_events(scripts, server, project):
    session_id = f"cc-{uuid.uuid4()}"
    transcripts = fixtures_dir() / "cursor" / "transcripts" / "projects"
    (transcript,) = transcripts.glob("*/agent-transcripts/*/*.jsonl")
    end = next(p for p in payloads() if p["hook_event_name"] == "SessionEnd")
    payload = {
        **end,
        "session_id": session_id,
        "cwd": str(project),
        "transcript_path": str(transcript),
    }
    run_hook(scripts, payload, server, project)

    def replayed():
        got = observations(server, session_id)
        return got if len(got) >= 2 else None

    titles = sorted(o["title"] for o in wait_for(replayed))
    assert titles == [
        "Prompt: rename getUser to fetchUser in src/api.ts and run the tests",
        "Prompt: 把这个决定记到笔记里：API 命名统一用 fetch 前缀",
    ]


def test_the_hooks_authenticate_with_the_shared_secret(scripts, start_server, project):
    server = start_server({"AGENTMEMORY_SECRET": "hook-secret"})
    session_id = f"cc-{uuid.uuid4()}"
    prompt = next(p for p in payloads() if p["hook_event_name"] == "UserPromptSubmit")
    payload = {**prompt, "session_id": session_id, "cwd": str(project)}
    headers = {"Authorization": "Bearer hook-secret"}

    run_hook(scripts, payload, server, project)  # no secret: refused, nothing stored
    run_hook(
        scripts, {**payload, "prompt": "second"}, server, project, AGENTMEMORY_SECRET="hook-secret"
    )

    got = wait_for(lambda: observations(server, session_id, headers))
    assert [o["title"] for o in got] == ["Prompt: second"]
