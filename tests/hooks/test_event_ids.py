"""Event ids: one id for one invocation run twice, two ids for two events that look alike.

No dedup by content (spec item 6): a second "continue", a second ``Stop`` with the same last
message, a second compaction are events of their own. What tells them apart is the moment:
the host's turn id or timestamp where the payload has one, the transcript's size where the
host appends every message to it, else the slot of the clock.
"""

from __future__ import annotations

import json

from memvault.hook import envelope
from memvault.hook.claude import CLAUDE_CODE, GEMINI
from memvault.hook.cursor import Cursor
from tests.hooks.runner import fixture, hook_env, placed, run_hook, session_of, stored

WINDOW = envelope.REPEAT_WINDOW
NOW = 1_800_000_000.0  # the start of a window: 1.8e9 is a multiple of 10


def event_id(host, payload, *, transcript=False, now=NOW):
    translation = host.translate(payload["hook_event_name"], payload, {})
    sent = envelope.build(
        host=host.name,
        event=payload["hook_event_name"],
        session_id="s",
        cwd="/code/demo-app",
        payload=payload,
        translation=translation,
        environ={},
        transcript=transcript,
        now=now,
    )
    return sent["eventId"]


def test_a_claude_event_is_told_apart_by_the_transcript_size(tmp_path):
    transcript = tmp_path / "session.jsonl"
    transcript.write_text('{"type":"user"}\n')
    stop = {**fixture("claude-code", "Stop"), "transcript_path": str(transcript)}
    first = event_id(CLAUDE_CODE, stop, transcript=True)
    # The same invocation again, even in another clock slot: the conversation has not moved.
    assert event_id(CLAUDE_CODE, stop, transcript=True, now=NOW + 3 * WINDOW) == first
    transcript.write_text('{"type":"user"}\n{"type":"assistant"}\n')  # a turn later
    assert event_id(CLAUDE_CODE, stop, transcript=True) != first


def test_without_a_transcript_the_clock_slot_tells_events_apart():
    stop = {**fixture("claude-code", "Stop"), "transcript_path": "/nowhere/session.jsonl"}
    first = event_id(CLAUDE_CODE, stop, transcript=True)
    assert event_id(CLAUDE_CODE, stop, transcript=True, now=NOW + WINDOW - 0.5) == first
    assert event_id(CLAUDE_CODE, stop, transcript=True, now=NOW + WINDOW) != first
    shell = fixture("cursor", "afterShellExecution")
    assert event_id(Cursor(), shell) == event_id(Cursor(), shell, now=NOW + 1)
    assert event_id(Cursor(), shell) != event_id(Cursor(), shell, now=NOW + WINDOW + 1)


def test_cursor_leaves_its_transcript_out_it_lags_behind(tmp_path):
    transcript = tmp_path / "agent.jsonl"
    transcript.write_text("{}\n")
    shell = {**fixture("cursor", "afterShellExecution"), "transcript_path": str(transcript)}
    first = event_id(Cursor(), shell)
    transcript.write_text("{}\n{}\n")
    assert event_id(Cursor(), shell) == first


def test_a_prompt_with_the_hosts_turn_id_has_the_same_id_at_any_time():
    for host, payload, turn in [
        (CLAUDE_CODE, fixture("claude-code", "UserPromptSubmit"), "prompt_id"),
        (Cursor(), fixture("cursor", "beforeSubmitPrompt"), "generation_id"),
        (CLAUDE_CODE, fixture("codex", "UserPromptSubmit"), "turn_id"),
    ]:
        first = event_id(host, payload)
        assert event_id(host, payload, now=NOW + 100 * WINDOW) == first
        assert event_id(host, {**payload, turn: "another-turn"}) != first


def test_a_payload_with_the_hosts_timestamp_needs_nothing_more():
    after_agent = fixture("gemini", "AfterAgent")
    assert event_id(GEMINI, after_agent) == event_id(GEMINI, after_agent, now=NOW + 99 * WINDOW)
    later = {**after_agent, "timestamp": "2026-11-30T10:00:01.000Z"}
    assert event_id(GEMINI, later) != event_id(GEMINI, after_agent)


def test_a_tool_use_id_is_the_id():
    payload = fixture("claude-code", "PostToolUseFailure")
    assert event_id(CLAUDE_CODE, payload, now=NOW + 7 * WINDOW) == (
        "claude-code:PostToolUseFailure:toolu_01ABC123"
    )


def claude(event: str, project, session: str, transcript, **fields) -> dict:
    base = placed(fixture("claude-code", event), project, session)
    return {**base, "transcript_path": str(transcript), **fields}


def grow(transcript, line: dict) -> None:
    with transcript.open("a") as out:
        out.write(json.dumps(line) + "\n")


def test_claude_code_events_that_only_look_alike_are_all_recorded(server, project, tmp_path):
    """A repeated "continue", two turns ending on "Done.", a second compaction and resume,
    a tool call without its id, each twice, as they come in a real session."""
    session = "repeats"
    transcript = tmp_path / f"{session}.jsonl"
    transcript.write_text("")
    env = hook_env(server.home, server.url)
    prompt = claude("UserPromptSubmit", project, session, transcript, prompt="continue")
    del prompt["prompt_id"]
    repeated = [
        prompt,
        claude("Stop", project, session, transcript),
        claude("SessionStart", project, session, transcript, source="compact"),
        claude("SessionStart", project, session, transcript, source="resume"),
        claude("PreCompact", project, session, transcript),
        claude("PostToolUse", project, session, transcript),
    ]
    for round_ in (1, 2):
        for payload in repeated:
            run_hook("claude-code", payload, env)
            grow(transcript, {"round": round_, "event": payload["hook_event_name"]})
    events = stored(server.home, session)
    assert len(events) == 2 * len(repeated)
    assert len({e.client_event_id for e in events}) == len(events)
    assert [e.payload.get("prompt") for e in events].count("continue") == 2


def test_one_claude_code_invocation_run_twice_is_one_event(server, project, tmp_path):
    transcript = tmp_path / "twice.jsonl"
    transcript.write_text('{"type":"user"}\n')
    payload = claude("Stop", project, "twice", transcript)
    env = hook_env(server.home, server.url)
    run_hook("claude-code", payload, env)
    run_hook("claude-code", payload, env)
    assert len(stored(server.home, session_of(payload))) == 1


def test_cursor_prompts_of_two_generations_are_two_events(server, project):
    env = hook_env(server.home, server.url)
    first = placed(fixture("cursor", "beforeSubmitPrompt"), project)
    first["prompt"] = "continue"
    second = {**first, "generation_id": "another-generation"}
    for payload in (first, second, first):
        run_hook("cursor", payload, env)
    assert len(stored(server.home, session_of(first))) == 2
