"""The session board over HTTP and from the command line, against real processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid

import httpx
import pytest

from tests.helpers import agentmemory_package, require_tool, wait_for

ID_LINE = re.compile(r"Your Memory Session ID is: (\d{4}-\d{2}-\d{2}-\d{4}-[a-z0-9-]+)")


@pytest.fixture
def board(server):
    with httpx.Client(base_url=f"{server.url}/agentmemory/board", timeout=30) as http:
        yield http


def test_session_start_registers_an_idle_row_and_announces_its_id(client, board):
    host_session = str(uuid.uuid4())
    body = {"sessionId": host_session, "project": "demo-app", "cwd": "/c", "agentId": "cursor"}
    answer = client.post("/session/start", json=body).json()
    (memory_id,) = ID_LINE.findall(answer["context"])
    assert answer["memorySessionId"] == memory_id and memory_id.endswith("-cursor-main-agent")
    row = board.get(f"/sessions/{memory_id}").json()["session"]
    assert (row["status"], row["topic"], row["keywords"]) == (
        "idle",
        "未設定",
        "sessionStart, cursor-agent",
    )
    again = client.post("/session/start", json=body).json()
    assert again["memorySessionId"] == memory_id  # a restart of the hook gets the same row
    sessions = client.get("/sessions").json()["sessions"]
    assert next(s for s in sessions if s["id"] == host_session)["memorySessionId"] == memory_id


def test_the_first_event_of_a_session_without_session_start_registers_it(client, board):
    host_session = str(uuid.uuid4())
    event = {
        "hookType": "prompt_submit",
        "sessionId": host_session,
        "project": "p",
        "cwd": "/p",
        "timestamp": "2026-11-30T10:00:00.000Z",
        "agentId": "claude-code",
        "data": {"prompt": "hello"},
    }
    assert client.post("/observe", json=event).status_code == 201

    def linked():
        sessions = client.get("/sessions").json()["sessions"]
        return next(s for s in sessions if s["id"] == host_session)["memorySessionId"]

    memory_id = wait_for(linked)
    assert memory_id.endswith("-claude-code-main-agent")
    assert board.get(f"/sessions/{memory_id}").status_code == 200


def test_register_update_continue_release_archive_over_http(board):
    source = board.post(
        "/register",
        json={
            "manual": True,
            "topic": "API naming",
            "agentName": "cursor-main-agent",
            "sections": {"Current Context": "Renaming APIs.", "Decisions": ["use fetch prefix"]},
        },
    )
    assert source.status_code == 200, source.text
    source_id = source.json()["sessionId"]
    current_id = board.post("/register", json={"agentName": "cursor-main-agent"}).json()[
        "sessionId"
    ]
    updated = board.post(
        f"/sessions/{current_id}/update", json={"snapshot": "## Decisions\n- keep REST\n"}
    )
    assert updated.json()["status"] == "active"
    assert board.post("/continue", json={"current": current_id, "source": source_id}).json()["ok"]
    refused = board.post(f"/sessions/{source_id}/archive", json={})
    assert refused.status_code == 409 and current_id in refused.json()["error"]
    assert board.post("/release", json={"current": current_id, "source": source_id}).json()["ok"]
    archived = board.post(f"/sessions/{source_id}/archive", json={})
    assert archived.status_code == 200 and archived.json()["action"] == "archived"
    assert board.get(f"/sessions/{source_id}").status_code == 404
    snapshot = board.get(f"/sessions/{current_id}").json()["snapshot"]
    assert "- keep REST" in snapshot


def test_organize_over_http_reports_what_it_would_do(board):
    board.post("/register", json={"agentName": "cursor-main-agent"})
    report = board.post("/organize", json={"dryRun": True}).json()
    assert report["ok"] and report["dryRun"] and report["deleted"]


def test_bad_board_requests_are_named(board):
    response = board.post("/register", json={"agentName": "Not A Name!"})
    assert response.status_code == 409 and "agent name" in response.json()["error"]
    response = board.post("/continue", json={"current": "x"})
    assert response.status_code == 400 and "source" in response.json()["error"]
    response = board.post("/register", json={"sections": {"Nonsense": "x"}})
    assert response.status_code == 400 and "unknown snapshot section" in response.json()["error"]


def test_trigger_route_reads_prompts(board):
    answer = board.post("/trigger", json={"prompt": "整理 memory"}).json()
    assert answer["trigger"]["operation"] == "organize"
    assert board.post("/trigger", json={"prompt": "hi"}).json() == {"trigger": None}


def test_agentmemorys_session_start_hook_prints_the_memory_session_id(server, tmp_path):
    node = require_tool("node")
    scripts = agentmemory_package() / "plugin" / "scripts"
    payload = {
        "session_id": str(uuid.uuid4()),
        "cwd": str(tmp_path),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    result = subprocess.run(
        [node, str(scripts / "session-start.mjs")],
        input=json.dumps(payload),
        text=True,
        capture_output=True,
        timeout=30,
        check=True,
        cwd=tmp_path,
        env={
            "PATH": os.environ["PATH"],
            "AGENTMEMORY_URL": server.url,
            "AGENTMEMORY_INJECT_CONTEXT": "true",
        },
    )
    assert ID_LINE.search(result.stdout), result.stdout


def memvault(home, *args):
    return subprocess.run(
        [sys.executable, "-m", "memvault.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "MEMVAULT_HOME": str(home)},
        timeout=60,
    )


def test_the_session_commands(tmp_path):
    registered = memvault(
        tmp_path,
        "session",
        "register",
        "--manual",
        "--topic",
        "Auth",
        "--agent",
        "cursor-main-agent",
        "--json",
    )
    assert registered.returncode == 0, registered.stderr
    source = json.loads(registered.stdout)["sessionId"]
    current = json.loads(memvault(tmp_path, "session", "register", "--json").stdout)["sessionId"]
    update = memvault(
        tmp_path,
        "session",
        "update",
        current,
        "--section",
        "Decisions: use PKCE",
        "--section",
        "Next Actions: ship",
    )
    assert update.returncode == 0 and "update" in update.stdout
    assert memvault(tmp_path, "session", "continue", current, source).returncode == 0
    refused = memvault(tmp_path, "session", "archive", source)
    assert refused.returncode == 1 and current in refused.stderr
    assert memvault(tmp_path, "session", "release", current, source).returncode == 0
    assert memvault(tmp_path, "session", "archive", source).returncode == 0
    listed = json.loads(memvault(tmp_path, "session", "list", "--json").stdout)
    assert [r["sessionId"] for r in listed] == [current]
    organized = memvault(tmp_path, "organize", "--dry-run")
    assert organized.returncode == 0 and "would delete 0 idle" in organized.stdout
    bad = memvault(tmp_path, "session", "update", current, "--section", "no colon here")
    assert bad.returncode == 2 and "Section: text" in bad.stderr
    shown = json.loads(memvault(tmp_path, "session", "show", current, "--json").stdout)
    assert shown["session"]["status"] == "active" and "- use PKCE" in shown["snapshot"]
    text = memvault(tmp_path, "session", "show", current)
    assert text.returncode == 0 and "## Decisions" in text.stdout
    missing = memvault(tmp_path, "session", "show", "2020-01-01-0000-nobody")
    assert missing.returncode == 1 and "not on the board" in missing.stderr
    snapshot = tmp_path / "vault" / "memory" / "sessions" / f"{current}.md"
    assert "- use PKCE" in snapshot.read_text(encoding="utf-8")


@pytest.mark.parametrize("route", ["sessions", "sessions/2026-05-25-1318-cursor-main-agent"])
def test_a_board_memvault_will_not_change_is_a_409_naming_the_file(start_server, tmp_path, route):
    from tests.vault.test_board_file import SEED_FILE

    line = SEED_FILE.splitlines(keepends=True)[6]
    broken = SEED_FILE.replace(line, line + line)  # the same session twice
    if route == "sessions":
        broken = broken.replace("|---|---|---|---|---|---|---|---|---|\n", "")  # no separator
    memory_dir = tmp_path / "home" / "vault" / "memory"
    memory_dir.mkdir(parents=True)
    (memory_dir / "index.md").write_text(broken, encoding="utf-8")
    server = start_server()
    response = httpx.get(f"{server.url}/agentmemory/board/{route}")
    assert response.status_code == 409
    assert "memory/index.md" in response.json()["error"]


def test_a_board_with_a_byte_that_is_not_utf8_answers_409_naming_the_line(start_server):
    server = start_server()
    with httpx.Client(base_url=f"{server.url}/agentmemory/board", timeout=30) as http:
        assert http.post("/register", json={"manual": True}).status_code == 200
        index = server.home / "vault" / "memory" / "index.md"
        with index.open("ab") as handle:
            handle.write(b"| caf\xe9 |\n")
        listed = http.get("/sessions")
        assert listed.status_code == 409, listed.text
        assert "not UTF-8" in listed.json()["error"] and "line 10" in listed.json()["error"]
        registered = http.post("/register", json={"manual": True})
        assert registered.status_code == 409, registered.text
