"""A compacted conversation gets its memory again: when Claude Code compacts a session
(PreCompact, then SessionStart with source "compact"), what memory gave the agent was in
the conversation that the summary replaced, so the session start's block after it gives
the project's memory again; Gemini, which takes no start block, gets it with its next
prompt's. A resumed session keeps its conversation, and is not given what it holds
already."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx

from tests.hooks.runner import answer, fixture, hook_env, placed, run_hook

SAID = "the billing exports run nightly at 02:00 UTC, never during the day"


def start_block(server, project, session: str, source: str) -> str:
    payload = {**placed(fixture("claude-code", "SessionStart"), project, session), "source": source}
    said = answer(run_hook("claude-code", payload, hook_env(server.home, server.url)))
    return said["hookSpecificOutput"]["additionalContext"] if said else ""


def remember(server, project) -> None:
    """The project's memory (the server may hold it already, from another test)."""
    remembered = httpx.post(
        f"{server.url}/agentmemory/remember",
        json={"project": project.name, "summary": SAID, "facts": ["decision: " + SAID]},
        timeout=10,
    )
    assert remembered.status_code in (200, 201), remembered.text


def test_after_a_compaction_the_session_start_gives_memory_again(server, project):
    remember(server, project)
    session = "compacted"
    assert SAID in start_block(server, project, session, "startup")
    assert SAID not in start_block(server, project, session, "resume")
    compact = placed(fixture("claude-code", "PreCompact"), project, session)
    assert answer(run_hook("claude-code", compact, hook_env(server.home, server.url))) is None
    assert SAID in start_block(server, project, session, "compact")
    assert SAID not in start_block(server, project, session, "resume")


def test_a_compaction_that_reaches_the_server_late_forgets_only_what_came_before_it(
    server, project
):
    """A PreCompact spooled while the server was away, or a transcript's compaction
    imported later, is dated when it happened: what the session was given since stays
    given."""
    remember(server, project)
    session = "late"
    assert SAID in start_block(server, project, session, "startup")
    earlier = {
        "sessionId": session,
        "project": project.name,
        "cwd": str(project),
        "hookType": "pre_compact",
        "eventId": "imported-compaction",
        "timestamp": "2026-01-01T10:00:00.000Z",
        "data": {"trigger": "auto"},
    }
    stored = httpx.post(
        f"{server.url}/agentmemory/observe/bulk", json={"observations": [earlier]}, timeout=10
    )
    assert stored.status_code == 200 and stored.json()["imported"] == 1, stored.text
    assert SAID not in start_block(server, project, session, "resume")


def gemini(server, payload: dict) -> dict | None:
    """A Gemini hook run, dated now: Gemini stamps each payload with its own time."""
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return answer(
        run_hook("gemini", {**payload, "timestamp": now}, hook_env(server.home, server.url))
    )


def gemini_prompt(server, project, session: str, prompt: str) -> str:
    payload = {**placed(fixture("gemini", "BeforeAgent"), project, session), "prompt": prompt}
    said = gemini(server, payload)
    return said["hookSpecificOutput"]["additionalContext"] if said else ""


def test_gemini_gets_the_standing_memory_with_its_first_prompt_and_after_a_compression(
    server, project
):
    """Gemini takes no block at a session's start, and runs no start after it compresses
    the conversation: the project's standing memory comes with the next prompt's block,
    once each time."""
    remember(server, project)
    session = "gemini-standing"
    assert gemini(server, placed(fixture("gemini", "SessionStart"), project, session)) is None
    assert SAID in gemini_prompt(server, project, session, "add a dark mode toggle to settings")
    assert SAID not in gemini_prompt(server, project, session, "and a test for the toggle")
    compress = {
        **placed(fixture("gemini", "SessionStart"), project, session),
        "hook_event_name": "PreCompress",
        "trigger": "auto",
    }
    compress.pop("source")
    assert gemini(server, compress) is None
    assert SAID in gemini_prompt(server, project, session, "now make the toggle remember")
    assert SAID not in gemini_prompt(server, project, session, "and document the toggle")
