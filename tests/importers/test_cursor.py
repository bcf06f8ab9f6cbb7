"""Cursor's agent transcripts and state.vscdb imported into a real store."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from datetime import UTC, datetime

import pytest

from memvault.importers import cursor, run_import
from memvault.importers.cursor_transcripts import cursor_time
from tests.importers.conftest import (
    COMPOSER,
    CURSOR_JSONL,
    CURSOR_SLUG,
    CURSOR_TXT,
    WORKSPACE,
    by_id,
    events_of,
    stored,
)

FOLDER = "/Users/dev/code/demo-app"  # what the workspace's workspace.json says


def import_all(memory, paths=None, **options):
    return run_import(memory, cursor.transcripts(paths or cursor.default_paths(), **options))


def transcripts_folder(home):
    return home / ".cursor" / "projects" / CURSOR_SLUG / "agent-transcripts"


def test_every_source_imported_twice_stores_the_same_rows(memory, home):
    first = import_all(memory)
    rows = stored(memory)

    again = import_all(memory)

    assert first.files == again.files == 3  # a .jsonl, a .txt and one composer
    assert first.new == first.sent == len(rows) == 18
    assert first.error_count == again.error_count == 0
    assert (again.new, again.duplicates) == (0, first.sent)
    assert stored(memory) == rows
    assert first.sessions == {CURSOR_JSONL, CURSOR_TXT, COMPOSER}


def test_an_agent_transcript_reads_as_prompts_replies_and_tool_calls(memory, home):
    import_all(memory)
    events = events_of(memory, CURSOR_JSONL)

    assert [(e.hook_type, e.client_event_id) for e in events] == [
        ("prompt_submit", f"{CURSOR_JSONL}:0:0"),
        ("assistant_response", f"{CURSOR_JSONL}:1:0"),
        ("post_tool_use", f"{CURSOR_JSONL}:1:1"),
        ("post_tool_use", f"{CURSOR_JSONL}:2:0"),
        ("post_tool_use", f"{CURSOR_JSONL}:2:1"),
        ("post_tool_use", f"{CURSOR_JSONL}:3:0"),
        ("assistant_response", f"{CURSOR_JSONL}:4:0"),
        ("prompt_submit", f"{CURSOR_JSONL}:6:0"),
        ("assistant_response", f"{CURSOR_JSONL}:7:0"),
        ("stop", f"{CURSOR_JSONL}:8:0"),
    ]
    first = events[0]
    assert first.payload == {
        "prompt": "rename getUser to fetchUser in src/api.ts and run the tests"
    }
    assert first.occurred_at == "2026-09-29T06:29:00.000Z"  # 2:29 AM at UTC-4
    assert events[1].occurred_at == "2026-09-29T06:29:00.001Z"
    assert events[7].occurred_at == "2026-09-29T06:41:00.000Z"
    assert {(e.project, e.cwd, e.agent_id) for e in events} == {("demo-app", FOLDER, "cursor")}
    assert events[5].payload == {
        "tool_name": "Shell",
        "tool_input": {"command": "npm test", "description": "run the unit tests"},
    }
    assert events[8].payload == {
        "assistantResponse": "好的，已记录：API 命名统一使用 `fetch` 前缀。"
    }
    assert events[9].payload == {"status": "error", "error": "context limit"}


def test_a_legacy_text_transcript_pairs_each_call_with_its_result(memory, home):
    report = import_all(memory)
    events = events_of(memory, CURSOR_TXT)

    assert [(e.hook_type, e.client_event_id) for e in events] == [
        ("prompt_submit", f"{CURSOR_TXT}:1"),
        ("assistant_response", f"{CURSOR_TXT}:7"),
        ("post_tool_use", f"{CURSOR_TXT}:8"),
        ("assistant_response", f"{CURSOR_TXT}:17"),
    ]
    assert events[0].payload == {"prompt": "list the files in src"}
    assert events[2].payload == {
        "tool_name": "Shell",
        "tool_input": {"command": "ls src", "description": "list source files"},
        "tool_output": "api.ts\nindex.ts",
    }
    assert events[3].payload == {"assistantResponse": "`src/` contains `api.ts` and `index.ts`."}
    assert report.skipped["thinking"] == 1  # the [Thinking] line
    mtime = (transcripts_folder(home) / f"{CURSOR_TXT}.txt").stat().st_mtime
    start = datetime.fromtimestamp(mtime, UTC).isoformat(timespec="milliseconds")
    assert events[0].occurred_at == start.replace("+00:00", "Z")


def test_a_state_database_conversation_has_its_bubbles_times_and_tool_results(memory, home):
    import_all(memory)
    events = by_id(memory, COMPOSER)

    assert list(events) == [
        "d0216c2d-1111-4a2b-8c3d-000000000001",
        "cursor:postToolUse:call_abc123",  # the id the live postToolUse hook gives the call
        "cursor:postToolUse:call_def456",
        "9c8d7e6f-4444-4a2b-8c3d-000000000004",
    ]
    prompt = events["d0216c2d-1111-4a2b-8c3d-000000000001"]
    assert prompt.payload == {"prompt": "rename getUser to fetchUser in src/api.ts"}
    assert prompt.occurred_at == "2025-12-25T19:35:08.512Z"
    assert (prompt.project, prompt.cwd) == ("demo-app", FOLDER)
    read = events["cursor:postToolUse:call_abc123"]
    assert read.hook_type == "post_tool_use"
    assert read.payload == {
        "tool_name": "read_file",
        "tool_input": {"target_file": "src/api.ts"},
        "tool_use_id": "call_abc123",
        "tool_output": '{"contents":"export function getUser(id) {}"}',
    }
    assert events["cursor:postToolUse:call_def456"].payload["tool_input"] == {"command": "npm test"}
    assert events["9c8d7e6f-4444-4a2b-8c3d-000000000004"].payload == {
        "assistantResponse": "Renamed `getUser` to `fetchUser`; tests pass."
    }


def test_the_database_is_read_without_a_lock_and_left_as_it_was(memory, home):
    database = home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    before = (hashlib.sha256(database.read_bytes()).hexdigest(), database.stat().st_mtime_ns)
    cursor_app = sqlite3.connect(database)
    cursor_app.execute("BEGIN EXCLUSIVE")  # Cursor is in the middle of a write
    try:
        report = import_all(memory)
    finally:
        cursor_app.rollback()
        cursor_app.close()

    assert report.error_count == 0
    assert len(events_of(memory, COMPOSER)) == 4
    after = (hashlib.sha256(database.read_bytes()).hexdigest(), database.stat().st_mtime_ns)
    assert after == before
    assert not database.with_name("state.vscdb-wal").exists()


def test_a_transcript_of_a_conversation_in_the_database_is_not_read_twice(memory, home):
    copy = transcripts_folder(home) / COMPOSER / f"{COMPOSER}.jsonl"
    copy.parent.mkdir()
    shutil.copy(transcripts_folder(home) / CURSOR_JSONL / f"{CURSOR_JSONL}.jsonl", copy)

    report = import_all(memory)

    assert report.skipped["transcript of a conversation read from state.vscdb"] == 1
    assert len(events_of(memory, COMPOSER)) == 4  # the bubbles only


def test_a_slug_is_resolved_against_the_disk_when_no_workspace_names_it(memory, home, tmp_path):
    folder = tmp_path / "code" / "my-app.v2"
    folder.mkdir(parents=True)
    transcript = _transcript(home, cursor.slug(str(folder)), "c-1")

    run_import(memory, [cursor.transcript(transcript, folders=cursor.Folders())])

    (event,) = events_of(memory, "c-1")
    assert (event.project, event.cwd) == ("my-app.v2", str(folder))


def test_an_unknown_slug_is_the_project_unless_one_is_named(memory, home):
    transcript = _transcript(home, "Users-nobody-gone-app", "c-2")

    named = _transcript(home, "Users-nobody-gone-app", "c-3")

    run_import(memory, [cursor.transcript(transcript), cursor.transcript(named, project="app")])

    (event,) = events_of(memory, "c-2")
    assert (event.project, event.cwd) == ("Users-nobody-gone-app", "Users-nobody-gone-app")
    (event,) = events_of(memory, "c-3")
    assert (event.project, event.cwd) == ("app", "Users-nobody-gone-app")


def test_a_subagent_transcript_belongs_to_its_conversation(memory, home):
    folder = transcripts_folder(home) / CURSOR_JSONL / "subagents"
    folder.mkdir()
    rows = [
        {"role": "user", "message": {"content": [{"type": "text", "text": "find callers"}]}},
        {
            "role": "assistant",
            "message": {
                "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "name": "Grep", "input": {"pattern": "getUser"}},
                ]
            },
        },
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Two callers."}]}},
    ]
    (folder / "sub-7.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    import_all(memory)

    events = [e for e in events_of(memory, CURSOR_JSONL) if e.client_event_id.count(":") == 3]
    assert [(e.hook_type, e.client_event_id) for e in events] == [
        ("subagent_start", f"{CURSOR_JSONL}:sub-7:0:0"),
        ("post_tool_use", f"{CURSOR_JSONL}:sub-7:1:1"),
        ("subagent_stop", f"{CURSOR_JSONL}:sub-7:2:0"),
    ]
    assert events[2].payload == {"agent_id": "sub-7", "last_assistant_message": "Two callers."}


def test_the_workspace_map_names_conversations_and_slugs(home):
    folders = cursor.Folders()
    folders.learn(cursor.user_dir() / "workspaceStorage")

    assert folders.for_composer(COMPOSER) == FOLDER
    assert folders.for_slug(CURSOR_SLUG) == FOLDER
    assert (cursor.user_dir() / "workspaceStorage" / WORKSPACE).is_dir()


@pytest.mark.parametrize(
    ("stamp", "expected"),
    [
        ("Tuesday, Sep 29, 2026, 2:29 AM (UTC-4)", "2026-09-29T06:29:00+00:00"),
        ("Monday, Aug 11, 2026, 3:04 PM (UTC+2)", "2026-08-11T13:04:00+00:00"),
        ("Friday, Oct 2, 2026, 11:30 PM (UTC+5:30)", "2026-10-02T18:00:00+00:00"),
        ("Friday, Oct 2, 2026, 12:05 AM (UTC)", "2026-10-02T00:05:00+00:00"),
        ("yesterday, around noon", None),
    ],
)
def test_cursor_prompt_times(stamp, expected):
    parsed = cursor_time(stamp)
    assert (parsed.isoformat() if parsed else None) == expected


def _transcript(home, slug: str, conversation: str):
    folder = home / ".cursor" / "projects" / slug / "agent-transcripts"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{conversation}.jsonl"
    row = {"role": "user", "message": {"content": [{"type": "text", "text": "hello"}]}}
    path.write_text(json.dumps(row) + "\n")
    os.utime(path, (1_790_000_000, 1_790_000_000))
    return path


def test_parallel_calls_in_a_legacy_transcript_get_their_own_results(memory, home):
    conversation = "11111111-2222-3333-4444-555555555555"
    folder = transcripts_folder(home)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{conversation}.txt").write_text(
        "user:\n<user_query>\ncompare api.ts and index.ts\n</user_query>\n\n"
        "assistant:\nReading both files.\n"
        "[Tool call] Read\n  path: src/api.ts\n[Tool call] Read\n  path: src/index.ts\n\n"
        "[Tool result] Read\nexport const api = 1;\n\n"
        '[Tool result] Read\nimport { api } from "./api";\n'
    )
    import_all(memory)
    reads = [e.payload for e in events_of(memory, conversation) if e.hook_type == "post_tool_use"]
    assert [(r["tool_input"], r["tool_output"]) for r in reads] == [
        ({"path": "src/api.ts"}, "export const api = 1;"),
        ({"path": "src/index.ts"}, 'import { api } from "./api";'),
    ]


def test_a_state_value_nested_deeper_than_memvault_reads_loses_only_itself(memory, home):
    # Deep enough to pass orjson (1,024 levels) and trip a walk of it: the one bubble is
    # skipped, the conversation's other bubbles import.
    database = home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    deep = "[" * 600 + "]" * 600
    with sqlite3.connect(database) as db:
        key, value = db.execute(
            "SELECT key, value FROM cursorDiskKV WHERE key LIKE 'bubbleId:%000000000004'"
        ).fetchone()
        text = value.decode() if isinstance(value, bytes) else value
        nested = text.rstrip().removesuffix("}") + f', "nested": {deep}}}'
        db.execute("UPDATE cursorDiskKV SET value = ? WHERE key = ?", (nested, key))
    import_all(memory)
    events = by_id(memory, COMPOSER)
    assert "d0216c2d-1111-4a2b-8c3d-000000000001" in events
    assert "9c8d7e6f-4444-4a2b-8c3d-000000000004" not in events
