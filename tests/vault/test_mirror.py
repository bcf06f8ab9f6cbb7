"""The store mirrors the board; the file stays the truth and hand edits reach the mirror."""

from __future__ import annotations

import time

from memvault import Memory
from memvault.memory.serving import board_watcher
from tests.helpers import envelope


def test_the_mirror_follows_operations_and_hand_edits(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        report = memory.board.register_session(agent="cursor-main-agent", manual=True, topic="Auth")
        (row,) = memory.board.mirrored()
        assert (row.session_id, row.topic, row.status) == (report.session_id, "Auth", "active")
        index = memory.board.index_path
        index.write_text(
            index.read_text(encoding="utf-8").replace("| Auth |", "| Auth, edited |"),
            encoding="utf-8",
        )
        assert memory.board.mirrored()[0].topic == "Auth, edited"
        assert memory.board.mirrored(status="idle") == []


def test_the_watcher_picks_up_hand_edits_while_running(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        memory.board.register_session(agent="cursor-main-agent")
        watcher = board_watcher(memory.board.sync, interval=0.05)
        watcher.start()
        try:
            index = memory.board.index_path
            index.write_text(
                index.read_text(encoding="utf-8").replace("| 未設定 |", "| Hand topic |"),
                encoding="utf-8",
            )
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                rows = memory.store.board_rows()
                if rows and rows[0].topic == "Hand topic":
                    break
                time.sleep(0.05)
            assert memory.store.board_rows()[0].topic == "Hand topic"
        finally:
            watcher.stop()


def test_a_host_session_gets_one_board_row_however_often_it_asks(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        memory.observe(envelope("host-1", agentId="cursor"))
        first = memory.board.register_host_session("host-1", "cursor")
        again = memory.board.register_host_session("host-1", "cursor")
        assert first.ok and again.ok and first.session_id == again.session_id
        assert first.session_id.endswith("-cursor-main-agent")
        assert memory.reads.session("host-1").board_session_id == first.session_id
        assert len(memory.board.rows()) == 1


def test_agent_names_follow_the_host(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        assert memory.board.agent_for("cursor") == "cursor-main-agent"
        assert memory.board.agent_for("claude-code") == "claude-code-main-agent"
        assert memory.board.agent_for("Claude") == "claude-code-main-agent"
        assert memory.board.agent_for("reviewer-agent") == "reviewer-agent"
        assert memory.board.agent_for(None) == "main-agent"


def test_starting_a_session_registers_it_and_says_so(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        request = {"sessionId": "host-s", "project": "p", "cwd": "/p", "agentId": "cursor"}
        started = memory.context.start_session(request)
        assert started.session.id == "host-s"
        assert started.board.ok and started.board.session_id.endswith("-cursor-main-agent")
        again = memory.context.start_session(request)
        assert again.board.session_id == started.board.session_id
        assert started.session.board_session_id == started.board.session_id
