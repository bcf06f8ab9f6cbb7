"""Host payload → envelope, function by function: no process, no server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.hook import envelope, paths
from memvault.hook.claude import CLAUDE_CODE, CODEX, GEMINI, from_cursor
from memvault.hook.cursor import Cursor, takes_prompt_context
from memvault.hook.transport import split_url
from tests.hooks.runner import fixture

CURSOR = Cursor()


def translate(host, payload, **environ):
    return host.translate(payload["hook_event_name"], payload, environ)


def test_cursor_shell_output_becomes_the_tool_output_of_a_shell_call():
    found = translate(CURSOR, fixture("cursor", "afterShellExecution"))
    assert found.hook_type == "post_tool_use"
    assert found.data["tool_name"] == "Shell"
    assert found.data["tool_input"] == {"command": "npm test"}
    assert found.data["tool_output"] == "Tests: 12 passed"
    assert "output" not in found.data and "command" not in found.data


def test_cursor_shell_keeps_a_working_folder_only_when_it_has_one():
    payload = fixture("cursor", "beforeShellExecution")
    assert translate(CURSOR, payload).data["tool_input"].keys() == {"command"}
    moved = translate(CURSOR, {**payload, "cwd": "/srv/app"})
    assert moved.data["tool_input"]["cwd"] == "/srv/app"


def test_cursor_mcp_calls_are_named_like_its_matchers_with_their_input_decoded():
    before = translate(CURSOR, fixture("cursor", "beforeMCPExecution"))
    after = translate(CURSOR, fixture("cursor", "afterMCPExecution"))
    assert before.data["tool_name"] == after.data["tool_name"] == "MCP:memory_search"
    assert before.data["tool_input"] == {"query": "api naming"}
    assert after.data["tool_output"] == '{"hits":1}'
    assert before.data["command"] == "uvx memory-server"  # which server: kept


def test_cursor_file_read_keeps_the_path_and_leaves_the_contents_out():
    found = translate(CURSOR, fixture("cursor", "beforeReadFile"))
    assert found.data["tool_input"] == {"file_path": "/Users/dev/code/demo-app/.env"}
    assert "content" not in found.data
    assert found.data["content_length"] == len("API_KEY=redacted")


def test_cursor_file_edit_is_an_edit_of_that_file():
    found = translate(CURSOR, fixture("cursor", "afterFileEdit"))
    assert found.hook_type == "post_tool_use"
    assert found.data["tool_name"] == "Edit"
    assert found.data["tool_input"]["file_path"].endswith(".gitkeep")
    assert found.data["tool_input"]["edits"] == [{"old_string": "", "new_string": ""}]


def test_cursor_response_and_failure_use_the_envelope_words():
    response = translate(CURSOR, fixture("cursor", "afterAgentResponse"))
    assert response.data["assistantResponse"].startswith("Renamed getUser")
    failure = translate(CURSOR, fixture("cursor", "postToolUseFailure"))
    assert failure.data["error"].startswith("cat: /nonexistent")
    assert failure.key == "34ae8a0e-595a-49bf-a092-594d3bdfa237"


def test_cursor_thoughts_are_skipped_unless_asked_for():
    payload = fixture("cursor", "afterAgentThought")
    assert translate(CURSOR, payload) is None
    kept = translate(CURSOR, payload, MEMVAULT_CAPTURE_THOUGHTS="1")
    assert kept.hook_type == "agent_thought"
    assert kept.data["text"] == "Need to read api.ts before editing."


def test_cursor_drops_the_email_and_the_ids_the_envelope_carries():
    data = translate(CURSOR, fixture("cursor", "sessionEnd")).data
    assert not {"user_email", "conversation_id", "session_id"} & data.keys()
    assert data["reason"] == "completed"


def test_an_event_nobody_mapped_is_stored_under_its_own_name():
    found = translate(CURSOR, {"hook_event_name": "afterTabFileEdit", "file_path": "a.py"})
    assert found.hook_type == "after_tab_file_edit"
    assert found.data["file_path"] == "a.py"


@pytest.mark.parametrize(
    ("version", "takes"),
    [
        ("2026.09.18-abc1234", True),
        ("2026.11.02-0f0f0f0", True),
        ("2026.07.23-e383d2b", False),
        ("3.1.10", False),
        (None, False),
    ],
)
def test_only_recent_cursor_cli_builds_take_context_on_a_prompt(version, takes):
    assert takes_prompt_context(version) is takes


def test_a_prompt_the_host_cannot_inject_into_is_noted_as_left_to_the_agent():
    ide = translate(CURSOR, fixture("cursor", "beforeSubmitPrompt"))
    assert ide.read is None and ide.data["memory_read"] == "agent"
    cli = translate(
        CURSOR, {**fixture("cursor", "beforeSubmitPrompt"), "cursor_version": "2026.10.01-aa"}
    )
    assert cli.read == envelope.READ_PROMPT and cli.data["memory_read"] == "hook"
    assert translate(CODEX, fixture("codex", "UserPromptSubmit")).data["memory_read"] == "agent"


def test_a_trigger_phrase_is_recorded_and_pointed_out():
    payload = {**fixture("claude-code", "UserPromptSubmit"), "prompt": "整理 memory 吧"}
    found = translate(CLAUDE_CODE, payload)
    assert found.data["trigger"]["operation"] == "organize"
    assert "`organize`" in found.note and "`memory_organize`" in found.note
    plain = translate(CLAUDE_CODE, fixture("claude-code", "UserPromptSubmit"))
    assert "trigger" not in plain.data and plain.note == ""


def test_claude_code_does_nothing_with_a_payload_cursor_sent():
    payload = {**fixture("claude-code", "PostToolUse"), "cursor_version": "3.1.10"}
    assert translate(CLAUDE_CODE, payload) is None
    assert CLAUDE_CODE.answer("PostToolUse", payload, None) is None


@pytest.mark.parametrize(
    ("fields", "environ", "cursor"),
    [
        ({"conversation_id": "c1"}, {}, True),
        ({"workspace_roots": ["/code/app"]}, {}, True),
        ({"generation_id": "g1"}, {}, True),
        ({}, {"CURSOR_VERSION": "2.4.0"}, True),
        ({}, {"CURSOR_VERSION": "2.4.0", "CLAUDECODE": "1"}, False),
        ({}, {"CURSOR_VERSION": "2.4.0", "CLAUDE_CODE_ENTRYPOINT": "cli"}, False),
        ({}, {}, False),
    ],
)
def test_claude_code_knows_a_payload_cursor_sent_without_cursor_version(fields, environ, cursor):
    payload = {**fixture("claude-code", "Stop"), **fields}
    assert from_cursor(payload, environ) is cursor
    assert (translate(CLAUDE_CODE, payload, **environ) is None) is cursor
    # Codex and Gemini are not run by Cursor: their hooks record what they get.
    assert translate(CODEX, payload, **environ) is not None


def test_only_files_are_enriched_not_the_folder_of_a_search():
    def files(tool_input):
        return envelope.touched_files({"tool_input": tool_input})

    assert files({"file_path": "/a/b.py", "old_string": "x"}) == ["/a/b.py"]
    assert files({"notebook_path": "/a/n.ipynb"}) == ["/a/n.ipynb"]
    assert files({"file_path": "/a/b.py", "edits": [{"file_path": "/a/c.py"}]}) == [
        "/a/b.py",
        "/a/c.py",
    ]
    assert files({"pattern": "TODO", "path": "/a/src"}) == []
    assert files({"pattern": "**/*.py", "path": "/a"}) == []


def test_lone_surrogates_are_replaced_before_sending():
    cut = json.loads('{"out": "party \\ud83d", "\\udc00key": ["\\ude00"], "ok": "\\ud83d\\ude00"}')
    sent = {"hookType": "post_tool_use", "cwd": "/code/\ud800", "data": cut}
    body = envelope.encode(sent)
    decoded = json.loads(body.decode("ascii"))
    assert decoded["data"] == {"out": "party \ufffd", "\ufffdkey": ["\ufffd"], "ok": "😀"}
    assert decoded["cwd"] == "/code/\ufffd"
    json.dumps(decoded, ensure_ascii=False).encode("utf-8")  # valid Unicode throughout


def test_claude_tool_outputs_and_subagent_messages_use_the_envelope_words():
    post = translate(CLAUDE_CODE, fixture("claude-code", "PostToolUse"))
    assert post.data["tool_output"] == {"stdout": "hello-from-tma", "interrupted": False}
    stop = translate(CLAUDE_CODE, fixture("claude-code", "SubagentStop"))
    assert stop.data["last_message"] == "OK"
    failure = translate(CLAUDE_CODE, fixture("claude-code", "PostToolUseFailure"))
    assert failure.key == "toolu_01ABC123"


def test_gemini_events_map_to_the_claude_ones():
    after_agent = translate(GEMINI, fixture("gemini", "AfterAgent"))
    assert after_agent.hook_type == "stop"
    assert after_agent.data["last_assistant_message"].strip() == "hello-from-tma"
    failed = {**fixture("gemini", "AfterTool"), "tool_response": {"error": "exit 1"}}
    assert translate(GEMINI, failed).hook_type == "post_tool_failure"
    assert translate(GEMINI, {"hook_event_name": "BeforeModel", "session_id": "s"}) is None
    assert translate(GEMINI, fixture("gemini", "SessionStart")).read is None


def test_event_ids_are_stable_and_tell_events_apart():
    payload = fixture("cursor", "afterShellExecution")
    first = envelope.event_id("cursor", "afterShellExecution", None, payload)
    assert first == envelope.event_id("cursor", "afterShellExecution", None, dict(payload))
    other = {**payload, "duration": 1235}
    assert first != envelope.event_id("cursor", "afterShellExecution", None, other)
    assert envelope.event_id("claude-code", "PostToolUse", "toolu_1", payload) == (
        "claude-code:PostToolUse:toolu_1"
    )
    long_key = envelope.event_id("codex", "PreToolUse", "x" * 500, payload)
    assert long_key.startswith("codex:PreToolUse:sha256-") and len(long_key) <= 256


def test_envelopes_are_clipped_well_under_the_body_limit():
    huge = {"tool_output": "y" * 100_000, "lines": list(range(1000)), "image": "iVBORw0KGgo" * 50}
    sent = {"hookType": "post_tool_use", "eventId": "e", "data": huge}
    data = json.loads(envelope.encode(sent))["data"]
    assert len(data["tool_output"]) < 8100 and data["tool_output"].endswith("[truncated]")
    assert len(data["lines"]) == envelope.ITEM_LIMIT + 1
    assert data["image"] == "[image data omitted]"
    enormous = {"data": {"rows": [["z" * 8000] * 100] * 100}}
    assert len(envelope.encode(enormous)) <= envelope.BODY_LIMIT


def test_the_project_is_the_repository_holding_the_folder(tmp_path):
    repository = tmp_path / "demo-app"
    (repository / ".git").mkdir(parents=True)
    (repository / "src" / "api").mkdir(parents=True)
    assert envelope.project_name(str(repository / "src" / "api"), {}) == "demo-app"
    assert envelope.project_name(str(tmp_path / "loose"), {}) == "loose"
    named = {"AGENTMEMORY_PROJECT_NAME": "shop", "MEMVAULT_PROJECT": " store "}
    assert envelope.project_name(str(repository), named) == "store"


@pytest.mark.parametrize(
    ("url", "parts"),
    [
        ("http://127.0.0.1:3111", ("http", "127.0.0.1", 3111, "")),
        ("https://memory.example.com/base/", ("https", "memory.example.com", 443, "/base")),
        ("http://[::1]:4000", ("http", "::1", 4000, "")),
        ("HTTP://user@localhost", ("http", "localhost", 80, "")),
    ],
)
def test_server_urls(url, parts):
    assert split_url(url) == parts


@pytest.mark.parametrize("url", ["127.0.0.1:3111", "ftp://x", "http://:80", "http://h:port"])
def test_bad_server_urls_are_refused(url):
    with pytest.raises(ValueError):
        split_url(url)


def test_the_server_and_the_hook_agree_on_the_default_home(monkeypatch, tmp_path):
    monkeypatch.delenv("MEMVAULT_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # the server must not read this as its home
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert Settings().home == Path(paths.default_home()) == Path(paths.home())
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert Settings().home == tmp_path / "data" / "memvault" == Path(paths.home())
    monkeypatch.setenv("MEMVAULT_HOME", str(tmp_path / "mine"))
    assert Settings().home == tmp_path / "mine" == Path(paths.home())
