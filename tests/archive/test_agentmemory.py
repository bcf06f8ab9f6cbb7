"""agentmemory's export (``ExportData``, version 0.3.0 to 0.9.29) imported: sessions, raw
events, memories as fragments; what cannot be derived again is counted as skipped."""

from __future__ import annotations

import io
import json

import pytest

from memvault.archive import ArchiveError, import_document, import_stream
from memvault.vault.fragments import Fragment
from tests.archive.conftest import files

RAW_TOOL = {
    "id": "obs_m1abc_0001",
    "sessionId": "ses_cursor_1",
    "timestamp": "2026-10-02T14:00:05.000Z",
    "hookType": "post_tool_use",
    "toolName": "Shell",
    "toolInput": {"command": "pnpm test"},
    "toolOutput": "12 passed",
    "raw": {
        "tool_name": "Shell",
        "tool_input": {"command": "pnpm test"},
        "tool_output": "12 passed",
    },
    "agentId": "cursor",
    "eventId": "cursor-gen-77:tool-1",
}
RAW_PROMPT = {
    "id": "obs_m1abc_0002",
    "sessionId": "ses_cursor_1",
    "timestamp": "2026-10-02T14:00:00.000Z",
    "hookType": "prompt_submit",
    "userPrompt": "Make the test suite pass",
    "raw": None,
}


def export_data(**changes) -> dict:
    """An export as agentmemory 0.9.29 (the Cursor fork, raw events included) writes it."""
    data = {
        "version": "0.9.29",
        "exportedAt": "2026-10-03T08:00:00.000Z",
        "sessions": [
            {
                "id": "ses_cursor_1",
                "project": "web-shop",
                "cwd": "/Users/dev/code/web-shop",
                "startedAt": "2026-10-02T14:00:00.000Z",
                "status": "completed",
                "observationCount": 2,
                "firstPrompt": "Make the test suite pass",
                "agentId": "cursor",
            },
            {
                "id": "ses_claude_9",
                "project": "api",
                "cwd": "/Users/dev/code/api",
                "startedAt": "2026-09-20T10:00:00.000Z",
                "status": "completed",
                "observationCount": 3,
            },
        ],
        "observations": {
            "ses_cursor_1": [
                {"id": "obs_m1abc_0001", "sessionId": "ses_cursor_1", "type": "command_run"},
                {"id": "obs_m1abc_0002", "sessionId": "ses_cursor_1", "type": "conversation"},
            ],
            "ses_claude_9": [
                {"id": f"obs_old_{n}", "sessionId": "ses_claude_9", "type": "file_edit"}
                for n in range(3)
            ],
        },
        "rawEvents": {"ses_cursor_1": [RAW_PROMPT, RAW_TOOL]},
        "memories": [
            {
                "id": "mem_1",
                "createdAt": "2026-10-02T15:00:00.000Z",
                "updatedAt": "2026-10-02T15:00:00.000Z",
                "type": "workflow",
                "title": "Run pnpm test before pushing",
                "content": "CI runs pnpm test.\nA red suite blocks the merge queue.",
                "concepts": ["testing", "merge queue"],
                "files": ["package.json"],
                "sessionIds": ["ses_cursor_1"],
                "strength": 1,
                "version": 1,
                "isLatest": True,
                "project": "web-shop",
            },
            {
                "id": "mem_2",
                "createdAt": "2026-09-20T11:00:00.000Z",
                "updatedAt": "2026-09-20T11:00:00.000Z",
                "type": "bug",
                "title": "",
                "content": "Timeouts come from the [[pool|connection pool]]. Raise it to 20.",
                "concepts": [],
                "files": [],
                "sessionIds": ["ses_claude_9"],
                "strength": 0.6,
                "version": 2,
                "isLatest": True,
            },
            {
                "id": "mem_0",
                "createdAt": "2026-09-19T11:00:00.000Z",
                "updatedAt": "2026-09-20T11:00:00.000Z",
                "type": "bug",
                "title": "Timeouts",
                "content": "Old guess: the network.",
                "concepts": [],
                "files": [],
                "sessionIds": [],
                "strength": 0.3,
                "version": 1,
                "isLatest": False,
            },
        ],
        "summaries": [
            {"sessionId": "ses_cursor_1", "project": "web-shop", "title": "Tests"},
            {"sessionId": "ses_claude_9", "project": "api", "title": "Pool"},
        ],
        "graphNodes": [{"id": "n1", "type": "file", "name": "package.json"}],
        "lessons": [{"id": "l1"}, {"id": "l2"}],
    }
    data.update(changes)
    return data


def fragments(memory) -> dict[str, Fragment]:
    folder = memory.settings.fragments_path
    return {name: Fragment.read(folder / name) for name in files(folder)}


def test_sessions_raw_events_and_memories_are_imported(target):
    report = import_document(target, export_data())

    assert report.source == "agentmemory" and report.version == "0.9.29"
    assert (report.counts["session"].new, report.counts["event"].new) == (2, 2)
    assert target.reads.session("ses_cursor_1").agent_id == "cursor"
    prompt, tool = target.reads.events("ses_cursor_1")
    assert (prompt.client_event_id, prompt.hook_type) == ("obs_m1abc_0002", "prompt_submit")
    assert prompt.payload == {"userPrompt": "Make the test suite pass"}
    assert tool.client_event_id == "cursor-gen-77:tool-1"
    assert tool.payload == RAW_TOOL["raw"]
    assert (tool.project, tool.cwd) == ("web-shop", "/Users/dev/code/web-shop")
    assert report.summaries_queued == 1


def test_memories_become_fragments_that_pass_the_fragment_rules(target):
    report = import_document(target, export_data())

    assert report.counts["memory"].new == 2
    assert report.reasons["memory: superseded by a newer version"] == 1
    by_source = {f.properties["source"]: f for f in fragments(target).values()}
    workflow = by_source["agentmemory:mem_1"]
    assert workflow.project == "web-shop"
    assert workflow.summary == "Run pnpm test before pushing"
    assert workflow.properties["date"] == "2026-10-02"
    assert set(workflow.properties["tags"]) == {
        "agent-memory",
        "workflow",
        "testing",
        "merge-queue",
    }
    assert workflow.body.splitlines() == [
        "- CI runs pnpm test.",
        "- A red suite blocks the merge queue.",
        "- file: package.json",
    ]
    bug = by_source["agentmemory:mem_2"]
    assert bug.project == "api"  # from its session
    assert bug.summary == "Timeouts come from the connection pool."
    assert "[[" not in bug.body
    assert target.fragments.check_fragments().errors == []


def test_observations_and_summaries_are_skipped_with_the_reason(target):
    report = import_document(target, export_data())

    assert report.counts["observation"].skipped == 5
    assert (
        report.reasons["observation: derived again by memvault from the session's raw events"] == 2
    )
    no_raw = "no raw events to derive it from (export from agentmemory with raw events)"
    assert report.reasons[f"observation: {no_raw}"] == 3
    assert report.reasons[f"summary: {no_raw}"] == 1
    assert report.counts["graphNodes"].skipped == 1 and report.counts["lessons"].skipped == 2


def test_importing_the_same_export_again_adds_nothing(target):
    import_document(target, export_data())
    before = files(target.settings.vault_path)

    again = import_document(target, export_data())

    assert again.total("new") == again.total("merged") == 0
    assert (again.counts["memory"].existing, again.counts["event"].existing) == (2, 2)
    assert files(target.settings.vault_path) == before


def test_an_export_file_is_told_apart_from_an_archive_by_its_content(target):
    pretty = json.dumps(export_data(), indent=2).encode()

    report = import_stream(target, io.BytesIO(pretty))

    assert report.source == "agentmemory" and report.counts["memory"].new == 2


def test_an_upstream_export_without_raw_events_keeps_sessions_and_memories(target):
    data = export_data(version="0.4.0")
    del data["rawEvents"]

    report = import_document(target, data)

    assert report.counts["session"].new == 2 and "event" not in report.counts
    assert report.counts["observation"].skipped == 5
    assert report.counts["memory"].new == 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"version": "0.9.30"}, "unsupported agentmemory export version '0.9.30'"),
        ({"version": "0.2.9"}, "unsupported agentmemory export version '0.2.9'"),
        ({"version": 9}, "version is required"),
        ({"sessions": {"a": 1}}, "sessions must be a list"),
        ({"rawEvents": []}, "rawEvents must be an object"),
    ],
)
def test_an_export_memvault_does_not_read_is_refused_before_anything_is_written(
    target, changes, message
):
    with pytest.raises(ArchiveError, match=message):
        import_document(target, export_data(**changes))

    assert target.reads.sessions() == [] and not files(target.settings.vault_path)


def test_a_raw_event_of_a_session_the_export_lacks_is_refused_by_name(target):
    data = export_data(rawEvents={"ses_missing": [RAW_PROMPT]})

    report = import_document(target, data)

    assert report.counts["event"].refused == 1
    assert report.problems[0].item == "rawEvents[ses_missing][0]"
