"""A compacted conversation gets its memory again: when Claude Code compacts a session
(PreCompact, then SessionStart with source "compact"), what memory gave the agent was in
the conversation that the summary replaced, so the session start's block after it gives
the project's memory again. A resumed session keeps its conversation, and is not given
what it holds already."""

from __future__ import annotations

import httpx

from tests.hooks.runner import answer, fixture, hook_env, placed, run_hook

SAID = "the billing exports run nightly at 02:00 UTC, never during the day"


def start_block(server, project, session: str, source: str) -> str:
    payload = {**placed(fixture("claude-code", "SessionStart"), project, session), "source": source}
    said = answer(run_hook("claude-code", payload, hook_env(server.home, server.url)))
    return said["hookSpecificOutput"]["additionalContext"] if said else ""


def test_after_a_compaction_the_session_start_gives_memory_again(server, project):
    remembered = httpx.post(
        f"{server.url}/agentmemory/remember",
        json={"project": project.name, "summary": SAID, "facts": ["decision: " + SAID]},
        timeout=10,
    )
    assert remembered.status_code == 201, remembered.text
    session = "compacted"
    assert SAID in start_block(server, project, session, "startup")
    assert SAID not in start_block(server, project, session, "resume")
    compact = placed(fixture("claude-code", "PreCompact"), project, session)
    assert answer(run_hook("claude-code", compact, hook_env(server.home, server.url))) is None
    assert SAID in start_block(server, project, session, "compact")
    assert SAID not in start_block(server, project, session, "resume")
