"""A board row is for work: host events that carry none (a SessionEnd alone, as
``claude mcp list`` sends, a notification) register nothing on the board."""

from __future__ import annotations

import json
import time

from memvault import Memory
from memvault.hook import spool
from memvault.ingest.spool import drain
from tests.helpers import envelope, wait_for
from tests.hooks.runner import fixture, hook_env, placed, run_hook, session_of, stored


def board_links(home) -> dict[str, str]:
    """Host session id → its board row's id, for every row on the board."""
    with Memory.open(home=home) as memory:
        ids = {row.session_id for row in memory.board.rows()}
        return {
            session.id: session.board_session_id
            for session in memory.reads.sessions()
            if session.board_session_id in ids
        }


def test_a_session_end_alone_registers_no_row(server, project):
    env = hook_env(server.home, server.url)
    ended = placed(fixture("claude-code", "SessionEnd"), project)  # what `claude mcp list` sends
    noticed = placed(fixture("claude-code", "Notification"), project)
    for payload in (ended, noticed):
        assert run_hook("claude-code", payload, env).returncode == 0
    worked = placed(fixture("claude-code", "UserPromptSubmit"), project)
    assert run_hook("claude-code", worked, env).returncode == 0
    # The prompt's row is registered after its answer; by then the others' would be too.
    wait_for(lambda: session_of(worked) in board_links(server.home), timeout=30)
    time.sleep(0.5)
    links = board_links(server.home)
    assert session_of(ended) not in links and session_of(noticed) not in links
    # The events themselves are kept: only the row is not made.
    assert [e.hook_type for e in stored(server.home, session_of(ended))] == ["session_end"]


def test_a_session_end_later_in_a_working_session_keeps_its_one_row(server, project):
    env = hook_env(server.home, server.url)
    worked = placed(fixture("claude-code", "UserPromptSubmit"), project)
    run_hook("claude-code", worked, env)
    wait_for(lambda: session_of(worked) in board_links(server.home), timeout=30)
    row = board_links(server.home)[session_of(worked)]
    ended = placed(fixture("claude-code", "SessionEnd"), project, session_of(worked))
    run_hook("claude-code", ended, env)
    assert board_links(server.home)[session_of(worked)] == row


def test_a_spooled_event_without_work_registers_no_row(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        folder = tmp_path / "home" / "spool"
        spool.put(str(folder), json.dumps(envelope("ended", 1, hookType="session_end")).encode())
        spool.put(str(folder), json.dumps(envelope("worked", 1)).encode())
        drain(folder, memory.capture.observe_many, memory.board.session_seen)
        assert memory.reads.session("ended") is not None
        assert not memory.reads.session("ended").board_session_id
        assert memory.reads.session("worked").board_session_id
