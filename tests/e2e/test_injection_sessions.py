"""Two Claude Code sessions through the real hook command and a real server: the first
makes a decision, the second recalls it. What each block the hook hands the agent holds,
and what the session records it was given."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import httpx

from memvault.memory.standing import STANDING_FRAGMENTS
from tests.helpers import wait_for
from tests.hooks.runner import answer, fixture, hook_env, injections, placed, run_hook

DECISION = "Refresh tokens are rotated on every use and a reused one revokes the session"
# The project's other memory: more important than the decision, so the standing block
# at a session start holds (the newest of) these and the decision comes with the prompt
# that needs it.
OTHERS = [
    ("CI runs the suite with npm test -- --runInBand", "ci: GitHub Actions"),
    ("Data loaders are named fetchX", "rule: fetchX, not getX"),
    ("Emails are rendered from MJML templates", "templates: templates/email"),
    ("Migrations run with alembic before the app starts", "never edit an applied one"),
    ("The checkout test was flaky because the payment mock retried", "mock: no retries"),
    ("Static files are served from the CDN bucket", "bucket: demo-app-static"),
    ("Feature flags live in config/flags.yaml", "default: off"),
    ("Logs go to stdout as JSON lines", "level: info in production"),
]


def _hook(server, payload: dict, project) -> str:
    env = hook_env(server.home, server.url, MEMVAULT_HOOK_TIMEOUT_MS="20000")
    said = answer(run_hook("claude-code", payload, env, cwd=project))
    return said["hookSpecificOutput"]["additionalContext"] if said else ""


def _settled(server) -> None:
    """Wait until what the first session left is indexed (and its background work done):
    which session a block tells of is decided by all of its memories together."""

    def settled():
        """the index caught up and no pipeline job pending or running"""
        health = httpx.get(f"{server.url}/agentmemory/health", timeout=10).json()
        queue = health["queue"]
        return health["index"]["caughtUp"] and not (queue["jobsPending"] or queue["jobsRunning"])

    wait_for(settled, timeout=60, interval=0.2)


def _event(name: str, project, session: str, **fields) -> dict:
    return {**placed(fixture("claude-code", name), project, session), **fields}


def test_a_decision_of_one_session_reaches_the_next_once_and_only_what_belongs(
    server, client, tmp_path
):
    project = tmp_path / "demo-app"
    project.mkdir()
    for summary, fact in OTHERS:
        client.post(
            "/remember",
            json={"project": "demo-app", "summary": summary, "facts": [fact], "importance": 0.9},
        ).raise_for_status()

    # Session 1: asks, runs the tests, decides, and the agent saves the decision. Its request
    # holds most of what session 2 asks, well clear of the focus's floor whether or not
    # session 2's own prompt is indexed when its block is made (which moves the weights).
    one = "s-decides"
    _hook(server, _event("SessionStart", project, one), project)
    _hook(
        server,
        _event(
            "UserPromptSubmit",
            project,
            one,
            prompt="when a refresh token is reused, should we revoke the session?",
        ),
        project,
    )
    _hook(
        server,
        _event(
            "PostToolUse",
            project,
            one,
            tool_input={"command": "npm test -- auth"},
            tool_response={"stdout": "FAIL refresh token reuse", "interrupted": False},
            tool_use_id="toolu_one",
        ),
        project,
    )
    client.post(
        "/remember",
        json={
            "project": "demo-app",
            "summary": DECISION,
            "facts": ["refresh token: rotated on use", "reuse → revoke the session family"],
            "importance": 0.5,
        },
    ).raise_for_status()

    _settled(server)
    # Session 2: starts, asks about something memory has nothing on, then about the decision.
    two = "s-recalls"
    started = _hook(server, _event("SessionStart", project, two), project)
    unrelated = _hook(
        server,
        _event(
            "UserPromptSubmit", project, two, prompt="kubernetes helm chart upgrade", prompt_id="p1"
        ),
        project,
    )
    recalled = _hook(
        server,
        _event(
            "UserPromptSubmit",
            project,
            two,
            prompt="is a reused refresh token supposed to revoke the session?",
            prompt_id="p2",
        ),
        project,
    )
    again = _hook(
        server,
        _event(
            "UserPromptSubmit",
            project,
            two,
            prompt="is a reused refresh token supposed to revoke the session?",
            prompt_id="p3",
        ),
        project,
    )

    assert "Your Memory Session ID is: " in started
    assert DECISION not in started and "Logs go to stdout as JSON lines" in started
    assert "→ relevant" not in started  # a standing block answers no request
    # Nothing passes the floor for the unrelated request: at most the line saying so.
    assert "→ relevant" not in unrelated and "## Agent memory" not in unrelated
    line = recalled.splitlines()[0]
    assert line.startswith("📖 agent memory：讀取 1 個碎片 → ") and line.endswith("→ relevant")
    assert DECISION in recalled
    assert again == ""  # nothing new since the last block

    blocks = [started, unrelated, recalled]
    for summary, _ in [*OTHERS, (DECISION, None)]:
        assert sum(summary in block for block in blocks) <= 1, summary
    for block in blocks:
        assert "未設定" not in block and "sessionStart" not in block  # placeholder rows
        assert "Session started" not in block and "Turn ended" not in block
        assert '{"command"' not in block and '"stdout"' not in block
        assert "supposed to revoke" not in block  # the prompt being answered
    # Session 1's tool call is related activity, by its title, never its output.
    assert "] Bash: npm test -- auth" in recalled
    assert "FAIL refresh token reuse" not in recalled

    given = [e.payload for e in injections(server.home, two)]
    assert [g["answered"] for g in given] == ["SessionStart", "UserPromptSubmit"]
    ids = [[i["id"] for i in g["items"] if i["kind"] == "fragment"] for g in given]
    assert len(ids[0]) == STANDING_FRAGMENTS and len(ids[1]) == 1  # the newest of OTHERS
    assert not set(ids[0]) & set(ids[1])
    assert all(g["tokens"] > 0 for g in given)
    # The session's observations show what it was told; the record is the host's kind.
    observed = httpx.get(
        f"{server.url}/agentmemory/observations", params={"sessionId": two}, timeout=10
    ).json()["observations"]
    records = [o for o in observed if o["type"] == "host_internal"]
    assert [o["title"] for o in records] == [
        f"Memory given ({g['answered']}): {len(g['items']) - 1} memories" for g in given
    ]

    # `memvault session show` (asking the running server) lists what the agent was given.
    row = re.search(r"Your Memory Session ID is: (\S+)", started).group(1)
    env = {**os.environ, "MEMVAULT_HOME": str(server.home), "MEMVAULT_URL": server.url}

    def show(*extra: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "memvault.cli", "session", "show", row, *extra],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout

    assert "Memory given to the agent" in show()
    listed = json.loads(show("--json"))["injections"]
    assert [b["answered"] for b in listed] == ["SessionStart", "UserPromptSubmit"]
    assert [i["id"] for i in listed[1]["items"] if i["kind"] == "fragment"] == ids[1]
