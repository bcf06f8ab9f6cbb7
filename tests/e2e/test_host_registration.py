"""Host sessions on the board: one row each, ids never shared, events never resurrect."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import httpx

from memvault import Memory
from tests.helpers import envelope

FIXED = datetime(2026, 11, 30, 14, 32, tzinfo=timezone(timedelta(hours=8)))


def opened(home):
    memory = Memory.open(home=home)
    memory.board.vault_board.clock = memory.board._host_board.clock = lambda: FIXED
    return memory


def start(memory, session_id, agent="cursor"):
    memory.context.start_session(
        {"sessionId": session_id, "project": "p", "cwd": "/p", "agentId": agent}
    )
    return memory.board.register_host_session(session_id, agent)


def test_an_id_organize_freed_is_not_given_to_another_session(tmp_path):
    with opened(tmp_path) as memory:
        first = start(memory, "host-a")
        memory.board.organize()
        second = start(memory, "host-b")
        assert second.ok and second.session_id != first.session_id
        assert memory.reads.session("host-b").board_session_id == second.session_id
        assert memory.reads.session("host-a").board_session_id == first.session_id


def test_host_names_become_valid_agent_names(tmp_path):
    with opened(tmp_path) as memory:
        assert memory.board.agent_for("cursor.1") == "cursor-1-main-agent"
        assert memory.board.agent_for("claude-code/2.0") == "claude-code-2-0-main-agent"
        assert memory.board.agent_for("!!!") == "main-agent"
        assert start(memory, "host-c", "claude-code/2.0").ok


def test_a_duplicated_row_counts_as_existing(tmp_path):
    with opened(tmp_path) as memory:
        report = start(memory, "host-d")
        index = memory.board.index_path
        line = next(
            ln
            for ln in index.read_text(encoding="utf-8").splitlines(True)
            if report.session_id in ln
        )
        index.write_text(index.read_text(encoding="utf-8") + line, encoding="utf-8")
        again = memory.board.register_host_session("host-d", "cursor")
        assert again.ok and again.session_id == report.session_id


def test_an_event_starts_one_registration_at_a_time(tmp_path):
    with opened(tmp_path) as memory:
        memory.observe(envelope("host-e"))
        assert memory.board.needs_board_row("host-e")
        assert not memory.board.needs_board_row("host-e")  # one is already in flight
        memory.board.register_from_event("host-e", None)
        assert not memory.board.needs_board_row("host-e")
        assert memory.reads.session("host-e").board_session_id


def test_events_after_a_restart_do_not_bring_back_an_organized_row(tmp_path):
    with opened(tmp_path) as memory:
        memory.observe(envelope("host-f"))
        memory.board.register_from_event("host-f", None)
        memory.board.organize()
        assert memory.board.rows() == []
    with opened(tmp_path) as memory:
        memory.observe(envelope("host-f", n=2))
        assert memory.board.needs_board_row("host-f")
        memory.board.register_from_event("host-f", None)
        assert memory.board.rows() == []


def test_an_oversized_body_to_a_board_route_is_413(start_server):
    server = start_server({"MEMVAULT_MAX_BODY_BYTES": "2048"})

    def chunks():
        yield b'{"sections": {"Decisions": "' + b"x" * 5000 + b'"}}'

    for content in (b'{"sections": {"Decisions": "' + b"x" * 5000 + b'"}}', chunks()):
        response = httpx.post(
            f"{server.url}/agentmemory/board/register",
            content=content,
            headers={"content-type": "application/json"},
        )
        assert response.status_code == 413
        assert "2048-byte limit" in response.json()["error"]
