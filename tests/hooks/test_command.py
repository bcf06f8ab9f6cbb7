"""The hook command as hosts run it: always exit 0, never a traceback, the right answer,
one event per event, and nothing but the standard library on its path."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

import memvault
from memvault.hook import spool
from tests.helpers import Server, wait_for
from tests.hooks.runner import (
    answer,
    dead_url,
    fixture,
    hook_env,
    one_window,
    placed,
    run_hook,
    session_of,
    spooled,
    stored,
)

SOURCE = str(Path(memvault.__file__).resolve().parents[1])


@pytest.mark.parametrize(
    "stdin",
    [b"", b"   \n", b"{not json", b"[1, 2]", b'"text"', b'{"session_id": "s"}', b"\xff\xfe"],
    ids=["empty", "blank", "not-json", "array", "string", "no-event", "not-utf8"],
)
def test_bad_input_is_reported_and_nothing_is_recorded(stdin, server, tmp_path):
    result = run_hook("claude-code", stdin, hook_env(tmp_path / "home", server.url))
    assert result.returncode == 0
    assert result.stdout == b""
    assert result.stderr.startswith(b"memvault-hook: ")
    assert b"nothing recorded" in result.stderr
    assert b"Traceback" not in result.stderr
    assert spooled(tmp_path / "home") == []


def test_a_payload_without_a_session_records_nothing_but_still_answers(server, project):
    payload = placed(fixture("cursor", "beforeShellExecution"), project)
    for key in ("conversation_id", "session_id"):
        payload.pop(key, None)
    result = run_hook("cursor", payload, hook_env(server.home, server.url))
    assert result.returncode == 0 and result.stdout == b""  # no decision: the host decides
    assert b"no session id" in result.stderr


def test_an_unknown_host_gets_the_usage(tmp_path):
    result = run_hook("windsurf", b"{}", hook_env(tmp_path / "home", dead_url()))
    assert result.returncode == 0 and result.stdout == b""
    assert b"usage: memvault-hook {cursor|claude-code|codex|gemini}" in result.stderr


@pytest.mark.parametrize("guard", ["MEMVAULT_INTERNAL", "AGENTMEMORY_SDK_CHILD"])
def test_sessions_memvault_runs_for_itself_are_not_recorded(guard, server, project):
    payload = placed(fixture("cursor", "beforeShellExecution"), project)
    result = run_hook("cursor", payload, hook_env(server.home, server.url, **{guard: "1"}))
    assert result.stdout == b"" and result.stderr == b""
    assert stored(server.home, session_of(payload)) == []


def test_an_agent_sdk_child_session_is_not_recorded(server, project):
    payload = {**placed(fixture("claude-code", "Stop"), project), "entrypoint": "sdk-ts"}
    result = run_hook("claude-code", payload, hook_env(server.home, server.url))
    assert result.stdout == b""
    assert stored(server.home, session_of(payload)) == []


def test_claude_code_hooks_run_by_cursor_record_nothing(server, project):
    """Cursor runs Claude Code's hooks with its own payloads; its own hooks record them."""
    payload = placed(fixture("cursor", "beforeSubmitPrompt"), project)
    payload["hook_event_name"] = "UserPromptSubmit"
    result = run_hook("claude-code", payload, hook_env(server.home, server.url))
    assert result.stdout == b"" and result.stderr == b""
    assert stored(server.home, session_of(payload)) == []


def test_claude_code_hooks_run_by_cursor_without_cursor_version_record_nothing(server, project):
    """The payload may lack ``cursor_version``; its Cursor-only fields, or Cursor's hook
    environment, still say who ran the hook."""
    start = placed(fixture("cursor", "sessionStart"), project)
    del start["cursor_version"]
    env = hook_env(server.home, server.url, CURSOR_VERSION="2.4.0")
    assert run_hook("claude-code", start, env).stdout == b""
    bare = {
        "session_id": start["session_id"],
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    assert run_hook("claude-code", bare, env).stdout == b""
    assert stored(server.home, session_of(start)) == []
    cursor = answer(run_hook("cursor", start, hook_env(server.home, server.url)))
    assert "Your Memory Session ID is: " in cursor["additional_context"]
    assert [e.agent_id for e in stored(server.home, session_of(start))] == ["cursor"]


def test_claude_code_started_in_cursors_terminal_is_recorded(server, project):
    payload = placed(fixture("claude-code", "Stop"), project)
    env = hook_env(server.home, server.url, CURSOR_VERSION="2.4.0", CLAUDECODE="1")
    run_hook("claude-code", payload, env)
    assert [e.agent_id for e in stored(server.home, session_of(payload))] == ["claude-code"]


def test_text_cut_inside_an_emoji_is_recorded_with_a_replacement_character(server, project):
    """A JavaScript host cuts a string between the halves of a surrogate pair."""
    payload = placed(fixture("claude-code", "PostToolUse"), project)
    raw = json.dumps(payload).replace('"hello-from-tma"', '"release party \\ud83d"')
    assert "\\ud83d" in raw
    result = run_hook("claude-code", raw, hook_env(server.home, server.url))
    assert result.stderr == b""
    (event,) = stored(server.home, session_of(payload))
    assert event.payload["tool_output"]["stdout"] == "release party \ufffd"


def test_the_same_payload_twice_is_one_event(server, project):
    payload = placed(fixture("cursor", "afterShellExecution"), project)
    env = hook_env(server.home, server.url)
    one_window()  # nothing but the clock tells this payload from a later one
    for _ in range(2):
        run_hook("cursor", payload, env)
    running = [
        subprocess.Popen(
            [sys.executable, "-m", "memvault.hook", "cursor"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        for _ in range(4)
    ]
    for process in running:
        process.communicate(json.dumps(payload).encode(), timeout=60)
    assert len(stored(server.home, session_of(payload))) == 1


def test_a_recent_cursor_cli_gets_memory_with_the_prompt(server, project):
    payload = placed(fixture("cursor", "beforeSubmitPrompt"), project)
    payload["cursor_version"] = "2026.10.01-0a1b2c3"
    got = answer(run_hook("cursor", payload, hook_env(server.home, server.url)))
    assert got["continue"] is True
    assert got["additional_context"].startswith("📖 agent memory")
    (event,) = stored(server.home, session_of(payload))
    assert event.payload["memory_read"] == "hook"


def test_a_trigger_phrase_reaches_the_agent_and_the_record(server, project):
    payload = placed(fixture("claude-code", "UserPromptSubmit"), project)
    payload["prompt"] = "接續 memory 2026-11-30-1432-cursor-main-agent"
    got = answer(run_hook("claude-code", payload, hook_env(server.home, server.url)))
    context = got["hookSpecificOutput"]["additionalContext"]
    assert "`continue` for 2026-11-30-1432-cursor-main-agent" in context
    assert "📖 agent memory" in context
    (event,) = stored(server.home, session_of(payload))
    assert event.payload["trigger"] == {
        "operation": "continue",
        "sessionId": "2026-11-30-1432-cursor-main-agent",
        "phrase": "接續 memory 2026-11-30-1432-cursor-main-agent",
    }


def test_memvault_hook_from_the_main_cli_does_the_same(server, project):
    payload = placed(fixture("cursor", "beforeReadFile"), project)
    result = run_hook(
        "cursor",
        payload,
        hook_env(server.home, server.url),
        command=[sys.executable, "-m", "memvault.cli", "hook", "cursor"],
    )
    assert result.returncode == 0 and result.stdout == b""
    assert [e.hook_type for e in stored(server.home, session_of(payload))] == ["pre_tool_use"]


def test_a_silent_server_costs_the_hook_its_timeout_and_the_event_is_spooled(tmp_path, project):
    with socket.create_server(("127.0.0.1", 0)) as silent:  # listens, never answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        env = hook_env(tmp_path / "home", url, MEMVAULT_HOOK_TIMEOUT_MS="300")
        started = time.monotonic()
        result = run_hook("claude-code", placed(fixture("claude-code", "Stop"), project), env)
        elapsed = time.monotonic() - started
    assert elapsed < 1.5
    assert b"no answer in time" in result.stderr
    assert len(spooled(tmp_path / "home")) == 1


@pytest.mark.parametrize(
    ("status", "kept"),
    [
        (503, True),
        (500, True),
        (429, True),
        (408, True),
        (401, True),  # a secret missing from a GUI-started editor's environment
        (403, True),
        (400, False),
        (404, True),  # not memvault's route: another program, a wrong MEMVAULT_URL
        (405, True),
        (409, False),
        (413, False),
        (415, False),
        (422, False),
    ],
)
def test_only_an_event_the_server_calls_wrong_is_dropped(status, kept, tmp_path, project):
    with answering(status) as url:
        env = hook_env(tmp_path / "home", url)
        result = run_hook("claude-code", placed(fixture("claude-code", "Stop"), project), env)
    assert result.returncode == 0 and result.stdout == b""
    assert f"HTTP {status}: stub says no".encode() in result.stderr
    assert len(spooled(tmp_path / "home")) == (1 if kept else 0)
    assert (b"waits in" if kept else b"dropped") in result.stderr


@pytest.mark.parametrize("limit", [None, "4096"])
def test_an_event_over_the_servers_body_limit_is_not_spooled(limit, tmp_path, project):
    """The server would refuse it (413) whenever it came back: said once, and the events
    around it are spooled as ever."""
    home = tmp_path / "home"
    env = hook_env(home, dead_url(), **({"MEMVAULT_MAX_BODY_BYTES": limit} if limit else {}))
    size = int(limit or spool.MAX_BODY_BYTES) + 1000
    call = placed(fixture("claude-code", "PostToolUse"), project, "s-" + "x" * size)
    result = run_hook("claude-code", call, env, cwd=project)
    assert result.returncode == 0 and result.stdout == b""
    assert result.stderr.count(b"\n") == 1
    assert f"over the server's {int(limit or spool.MAX_BODY_BYTES)}-byte limit".encode() in (
        result.stderr
    )
    assert b"not spooled" in result.stderr
    assert spooled(home) == []
    after = placed(fixture("claude-code", "PostToolUse"), project)
    assert b"waits in" in run_hook("claude-code", after, env, cwd=project).stderr
    assert len(spooled(home)) == 1


def test_the_hook_sends_the_shared_secret(tmp_path, project):
    server = Server(tmp_path / "secured", {"MEMVAULT_SECRET": "hook-secret"}).start()
    try:
        payload = placed(fixture("claude-code", "Stop"), project)
        without = run_hook("claude-code", payload, hook_env(tmp_path / "a", server.url))
        assert b"HTTP 401" in without.stderr and b"MEMVAULT_SECRET" in without.stderr
        assert stored(server.home, session_of(payload)) == []
        assert len(spooled(tmp_path / "a")) == 1  # kept for a server of that home
        env = hook_env(tmp_path / "b", server.url, AGENTMEMORY_SECRET="hook-secret")
        run_hook("claude-code", payload, env)
        assert len(stored(server.home, session_of(payload))) == 1
    finally:
        server.stop()


def test_an_event_sent_without_the_secret_reaches_the_server_through_the_spool(tmp_path, project):
    server = Server(tmp_path / "secured", {"MEMVAULT_SECRET": "hook-secret"}).start()
    try:
        payload = placed(fixture("claude-code", "UserPromptSubmit"), project)
        result = run_hook("claude-code", payload, hook_env(server.home, server.url))
        assert b"HTTP 401" in result.stderr and b"waits in" in result.stderr
        wait_for(lambda: stored(server.home, session_of(payload)), timeout=30)
        wait_for(lambda: spooled(server.home) == [], timeout=10)  # the file goes just after
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("host", "event", "live"),
    [("claude-code", "UserPromptSubmit", True), ("cursor", "postToolUse", False)],
)
def test_the_hook_imports_only_the_standard_library(host, event, live, server, project, tmp_path):
    """Run with ``-S`` (no site packages at all): whatever else it needed would fail, and
    everything it loaded is listed."""
    code = (
        "import sys\n"
        f"sys.path.insert(0, {SOURCE!r})\n"
        "from memvault.hook import main\n"
        f"main([{host!r}])\n"
        "sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules)))\n"
    )
    payload = placed(fixture(host, event), project)
    env = hook_env(server.home, server.url) if live else hook_env(tmp_path, dead_url())
    result = run_hook(host, payload, env, command=[sys.executable, "-S", "-c", code])
    if live:
        assert len(stored(server.home, session_of(payload))) == 1
    else:
        assert len(spooled(tmp_path)) == 1
    modules = result.stderr.decode().split("MODULES ", 1)[1].split()
    ours = {m for m in modules if m.split(".")[0] == "memvault"}
    assert ours <= {"memvault", "memvault.triggers"} | {
        m for m in ours if m.startswith("memvault.hook")
    }
    others = {m.split(".")[0] for m in modules} - {"memvault", "__main__"}
    assert others <= sys.stdlib_module_names, others - sys.stdlib_module_names


class answering:
    """A stub server on loopback that answers every POST with ``status``."""

    def __init__(self, status: int) -> None:
        body = json.dumps({"error": "stub says no"}).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_before_claude_code_edits_a_file_it_is_told_what_memory_says_about_it(server, project):
    remembered = httpx.post(
        f"{server.url}/agentmemory/remember",
        json={
            "project": project.name,
            "summary": "auth_tokens.py must refresh tokens before expiry, never after",
            "facts": ["file: src/auth_tokens.py", "pitfall: refresh after expiry ⇒ 401 storm"],
        },
        timeout=10,
    )
    assert remembered.status_code == 201, remembered.text
    payload = placed(fixture("claude-code", "PreToolUse"), project)
    payload["tool_name"] = "Edit"
    payload["tool_input"] = {
        "file_path": str(project / "src" / "auth_tokens.py"),
        "old_string": "a",
        "new_string": "b",
    }
    said = answer(run_hook("claude-code", payload, hook_env(server.home, server.url)))
    context = said["hookSpecificOutput"]["additionalContext"]
    assert said["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert "refresh tokens before expiry" in context
    bash = placed(fixture("claude-code", "PreToolUse"), project)  # no file: nothing to say
    assert answer(run_hook("claude-code", bash, hook_env(server.home, server.url))) is None


def test_a_file_memory_knows_nothing_about_gets_no_memory_block(server, tmp_path):
    project = tmp_path / "quiet-app"  # a project with no memory at all yet
    project.mkdir()
    read = placed(fixture("claude-code", "PreToolUse"), project)
    read["tool_name"] = "Read"
    read["tool_input"] = {"file_path": str(project / "src" / "never_seen_before.py")}
    enriched = httpx.post(
        f"{server.url}/agentmemory/enrich",
        json={"files": [read["tool_input"]["file_path"]], "project": project.name},
        timeout=10,
    ).json()
    assert enriched["found"] == 0 and enriched["context"].startswith("📖 agent memory")
    assert answer(run_hook("claude-code", read, hook_env(server.home, server.url))) is None
    assert len(stored(server.home, session_of(read))) == 1  # recorded all the same


def test_a_search_in_a_folder_is_not_enriched(server, project):
    """Grep and Glob name a folder with ``path``: memory about it is noise."""
    remembered = httpx.post(
        f"{server.url}/agentmemory/remember",
        json={
            "project": project.name,
            "summary": "billing_rules holds the VAT table",
            "facts": ["folder: src/billing_rules"],
        },
        timeout=10,
    )
    assert remembered.status_code == 201, remembered.text
    grep = placed(fixture("claude-code", "PreToolUse"), project)
    grep["tool_name"] = "Grep"
    grep["tool_input"] = {"pattern": "VAT", "path": str(project / "billing_rules")}
    assert answer(run_hook("claude-code", grep, hook_env(server.home, server.url))) is None
