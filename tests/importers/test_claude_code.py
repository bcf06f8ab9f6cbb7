"""Claude Code transcripts imported into a real store, as its live hooks would send them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memvault.hook import envelope as hook_envelope
from memvault.importers import claude_code, run_import
from tests.importers.conftest import (
    CLAUDE_SPOTTER,
    CLAUDE_WORKTREE,
    COMPACTED_SESSION,
    by_id,
    events_of,
    stored,
)

SHORT = "55604662-cf2a-4331-851a-ec234028f8ca"
TOOL_HEAVY = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"


def import_all(memory, root: Path):
    found = claude_code.discover(root)
    return run_import(memory, [claude_code.transcript(p) for p in found.files])


def test_every_fixture_imported_twice_stores_the_same_rows(memory, home):
    first = import_all(memory, claude_code.default_root())
    rows = stored(memory)

    again = import_all(memory, claude_code.default_root())

    assert first.files == again.files == 3
    assert first.lines == again.lines == 15 + 39 + 46
    assert first.new == first.sent == len(rows) == 17
    assert first.error_count == again.error_count == 0
    assert again.new == 0
    assert again.duplicates == again.sent == first.sent
    assert stored(memory) == rows
    assert first.sessions == {SHORT, TOOL_HEAVY, COMPACTED_SESSION}


def test_prompts_and_assistant_text_keep_their_line_ids_and_times(memory, home):
    import_all(memory, claude_code.default_root())
    events = by_id(memory, SHORT)

    prompt = events["7d48cbd2-6615-4dd8-87f6-38f12b8167d6"]
    assert prompt.hook_type == "prompt_submit"
    assert prompt.payload == {"prompt": "mix phx.server doesnt seem to start"}
    assert prompt.occurred_at == "2026-02-10T21:11:56.846Z"
    assert (prompt.project, prompt.cwd, prompt.agent_id) == (
        "spotter",
        "/home/marco/projects/spotter",
        "claude-code",
    )
    (reply,) = [e for e in events.values() if e.hook_type == "assistant_response"]
    assert reply.payload == {
        "assistantResponse": "Let me check the project structure and try running the server "
        "to see the error."
    }


def test_a_tool_call_and_its_result_are_one_event_at_the_results_time(memory, home):
    import_all(memory, claude_code.default_root())
    # The id memvault's live PostToolUse hook gives the same call.
    call = by_id(memory, TOOL_HEAVY)["claude-code:PostToolUse:toolu_018GZVh9ymkrdx1TnR8reg5Y"]

    assert call.hook_type == "post_tool_use"
    assert call.payload == {
        "tool_name": "Bash",
        "tool_input": {
            "command": "mix phx.server",
            "description": "Start Phoenix server in background",
            "run_in_background": True,
        },
        "tool_use_id": "toolu_018GZVh9ymkrdx1TnR8reg5Y",
        "tool_output": "Command running in background with ID: bae407b. Output is being "
        "written to: /tmp/claude-1000/-home-marco-projects-spotter/tasks/bae407b.output",
    }
    assert call.occurred_at == "2026-02-10T22:57:59.113Z"  # the result's line, not the call's
    (observation,) = [o for o in memory.reads.observations(TOOL_HEAVY) if o.event_seq == call.seq]
    assert observation.title == "Bash: mix phx.server"


def test_a_rejected_tool_call_is_a_failure(memory, home):
    import_all(memory, claude_code.default_root())
    failure = by_id(memory, SHORT)["claude-code:PostToolUseFailure:toolu_0116Hyi5v8ut7Ffb7d8qV1Sc"]

    assert failure.hook_type == "post_tool_failure"
    assert failure.payload["tool_name"] == "Bash"
    assert failure.payload["tool_input"]["command"] == "mix phx.server 2>&1 | head -80"
    assert failure.payload["error"].startswith("The user doesn't want to proceed with this tool")
    assert "tool_output" not in failure.payload


def test_chatter_is_skipped_and_counted(memory, home):
    report = import_all(memory, claude_code.default_root())
    prompts = [
        e.payload["prompt"] for e in events_of(memory, TOOL_HEAVY) if e.hook_type == "prompt_submit"
    ]

    assert prompts == [
        "start phoenix in background",
        "scrolling back in xterm.js still does not work (maybe because outer web catches it)? "
        "websearch xterm.js tmux interactions",
    ]
    assert report.skipped["slash command or interruption"] == 5  # /mcp, its output, 3 markers
    assert report.skipped["meta message"] == 1
    assert report.skipped["thinking"] == 4
    assert report.skipped["progress"] == 41


def test_the_compaction_summary_travels_with_its_boundary_not_as_a_prompt(memory, home):
    report = import_all(memory, claude_code.default_root())
    events = events_of(memory, COMPACTED_SESSION)

    (compaction,) = [e for e in events if e.hook_type == "pre_compact"]
    assert compaction.client_event_id == "dd3cc2e6-a191-4331-a0f0-2473e6d7692d"
    assert compaction.occurred_at == "2026-02-12T20:30:28.504Z"
    assert compaction.payload["trigger"] == "auto"
    assert compaction.payload["preTokens"] == 170251
    assert compaction.payload["summary"].startswith(
        "This session is being continued from a previous conversation that ran out of context."
    )
    prompts = [e.payload["prompt"] for e in events if e.hook_type == "prompt_submit"]
    assert prompts == [
        "Work on bead spotter-dov. Run bd show spotter-dov to see the issue details and bd "
        "ready to find available subtasks. Start with the first ready task.",
        "continue",
    ]
    assert [e.hook_type for e in events][-1] == "assistant_response"  # after the compaction
    # The excerpt was cut: two results lost their calls, two calls their results.
    assert report.skipped["tool result without its call"] == 2
    assert report.skipped["tool call without a result"] == 2


def test_a_subagent_is_its_task_its_tools_and_its_last_message(memory, tmp_path):
    session = tmp_path / "projects" / "-home-dev-app" / "s-1"
    lines = [
        _line("user", "a1", None, "Find where fetchUser is defined"),
        _line("assistant", "a2", "a1", [{"type": "text", "text": "Searching."}]),
        _line(
            "assistant",
            "a3",
            "a2",
            [{"type": "tool_use", "id": "toolu_sub1", "name": "Grep", "input": {"pattern": "x"}}],
        ),
        _line(
            "user",
            "a4",
            "a3",
            [{"type": "tool_result", "tool_use_id": "toolu_sub1", "content": "src/api.ts:3"}],
        ),
        _line("assistant", "a5", "a4", [{"type": "text", "text": "It is in src/api.ts."}]),
    ]
    (session / "subagents").mkdir(parents=True)
    path = session / "subagents" / "agent-ab12.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    report = run_import(memory, [claude_code.transcript(path)])

    events = events_of(memory, "s-1")
    assert [(e.hook_type, e.client_event_id) for e in events] == [
        ("subagent_start", "a1"),
        ("post_tool_use", "claude-code:PostToolUse:toolu_sub1"),
        ("subagent_stop", "a5"),
    ]
    assert events[0].payload == {"agent_id": "ab12", "task": "Find where fetchUser is defined"}
    assert events[1].payload["agent_id"] == "ab12"
    assert events[2].payload == {
        "agent_id": "ab12",
        "last_assistant_message": "It is in src/api.ts.",
    }
    assert report.skipped["subagent message (its last one is kept)"] == 2


def test_lines_without_a_timestamp_are_dated_by_the_files_time_in_line_order(memory, tmp_path):
    path = tmp_path / "s-2.jsonl"
    lines = [_line("user", f"u{n}", None, f"prompt {n}", sidechain=False) for n in range(3)]
    for line in lines:
        del line["timestamp"], line["sessionId"]  # the file's name says the session
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    os.utime(path, (1_790_000_000, 1_790_000_000))

    run_import(memory, [claude_code.transcript(path)])

    assert [e.occurred_at for e in events_of(memory, "s-2")] == [
        "2026-09-21T14:13:20.000Z",
        "2026-09-21T14:13:20.001Z",
        "2026-09-21T14:13:20.002Z",
    ]


def test_the_project_can_be_named(memory, home):
    project = claude_code.default_root() / CLAUDE_SPOTTER / "short.jsonl"
    run_import(memory, [claude_code.transcript(project, project="renamed")])

    assert {e.project for e in events_of(memory, SHORT)} == {"renamed"}
    assert not events_of(memory, COMPACTED_SESSION)
    assert (claude_code.default_root() / CLAUDE_WORKTREE).is_dir()


def _line(kind: str, uuid: str, parent: str | None, content, *, sidechain: bool = True) -> dict:
    """A transcript line shaped like Claude Code's (a subagent's, by default)."""
    return {
        "parentUuid": parent,
        "isSidechain": sidechain,
        "userType": "external",
        "cwd": "/home/dev/app",
        "sessionId": "s-1",
        **({"agentId": "ab12"} if sidechain else {}),
        "type": kind,
        "message": {"role": kind, "content": content},
        "uuid": uuid,
        "timestamp": f"2026-11-30T10:00:0{uuid[-1]}.000Z",
    }


def test_reminders_claude_code_adds_to_a_prompt_are_not_part_of_it(memory, tmp_path):
    path = tmp_path / "s-3.jsonl"
    content = [
        {"type": "text", "text": "<system-reminder>\nThe date changed.\n</system-reminder>"},
        {"type": "text", "text": "now fix the flaky test"},
    ]
    line = _line("user", "r1", None, content, sidechain=False)
    line["sessionId"] = "s-3"
    path.write_text(json.dumps(line) + "\n")

    run_import(memory, [claude_code.transcript(path)])

    (event,) = events_of(memory, "s-3")
    assert event.payload == {"prompt": "now fix the flaky test"}


def test_a_tool_call_the_live_hook_already_sent_is_not_stored_again(memory, home):
    call = "toolu_018GZVh9ymkrdx1TnR8reg5Y"
    live = {"hook_event_name": "PostToolUse", "session_id": TOOL_HEAVY, "tool_use_id": call}
    memory.observe(
        {
            "hookType": "post_tool_use",
            "sessionId": TOOL_HEAVY,
            "project": "spotter",
            "cwd": "/home/marco/projects/spotter",
            "timestamp": "2026-02-10T22:57:59.200Z",
            "agentId": "claude-code",
            "eventId": hook_envelope.event_id("claude-code", "PostToolUse", call, live),
            "data": {"tool_name": "Bash", "tool_input": {"command": "mix phx.server"}},
        }
    )

    report = import_all(memory, claude_code.default_root())

    assert report.duplicates == 1
    assert [e.client_event_id for e in events_of(memory, TOOL_HEAVY)].count(
        f"claude-code:PostToolUse:{call}"
    ) == 1
