"""A session whose events reach memvault after they were lived (spooled while the server
was down and sent days later) gets a board row dated as the session was lived: its id,
Started At and Updated At come from its events' times, so the board reads as the history
it is and organize marks an old session stale."""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest

from memvault import Memory
from memvault.hook import spool
from memvault.ingest.spool import drain
from tests.helpers import envelope

SESSION = "offline-1"


@pytest.fixture(params=["UTC", "America/Los_Angeles", "Asia/Shanghai"])
def zone(request, monkeypatch):
    """The machine's time zone: one without summer time, one whose October is summer time
    and December is not, one far east."""
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield request.param
    monkeypatch.undo()
    time.tzset()


def _local(iso: str) -> str:
    """A stored time as the board writes it: local time, to the minute."""
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def _lived_weeks_ago(folder) -> None:
    """A short working session of 2026-10-01, in the spool as the hook left it."""
    events = [
        envelope(
            SESSION,
            1,
            hookType="prompt_submit",
            timestamp="2026-10-01T08:05:00.000Z",
            data={"prompt": "The login test fails on a slow machine; make it wait for the form."},
        ),
        envelope(
            SESSION,
            2,
            timestamp="2026-10-01T08:20:00.000Z",
            data={
                "tool_name": "Edit",
                "tool_input": {
                    "file_path": "/home/dev/code/demo-app/tests/login.spec.ts",
                    "old_string": "await page.click('#submit')",
                    "new_string": "await page.waitForSelector('#submit'); "
                    "await page.click('#submit')",
                },
                "tool_output": "The file was updated.",
            },
        ),
        envelope(SESSION, 3, timestamp="2026-10-01T09:47:00.000Z"),
    ]
    for event in events:
        spool.put(str(folder), json.dumps(event).encode())


def test_a_session_sent_after_it_was_lived_is_dated_as_lived(tmp_path, zone):
    with Memory.open(home=tmp_path / "home") as memory:
        folder = tmp_path / "home" / "spool"
        _lived_weeks_ago(folder)
        drain(folder, memory.capture.observe_many, memory.board.session_seen)
        session = memory.store.get_session(SESSION)
        row = memory.board.row(session.board_session_id)
        began = _local("2026-10-01T08:05:00Z")
        assert row.started_at == row.updated_at == began
        day, time = began.split()
        assert session.board_session_id.startswith(f"{day}-{time.replace(':', '')}-")

        memory.pipeline.summarize_session(SESSION)
        row = memory.board.row(session.board_session_id)
        assert row.status == "active"  # the session did real work
        assert (row.started_at, row.updated_at) == (began, _local("2026-10-01T09:47:00Z"))
        snapshot = memory.board.snapshot_text(session.board_session_id)
        assert f"\nupdated: {row.updated_at.replace(' ', 'T')}\n" in snapshot

        report = memory.board.organize()
        assert report.details["markedStale"] == [session.board_session_id]


def test_an_update_made_since_is_not_dated_back(tmp_path, zone):
    with Memory.open(home=tmp_path / "home") as memory:
        folder = tmp_path / "home" / "spool"
        _lived_weeks_ago(folder)
        drain(folder, memory.capture.observe_many, memory.board.session_seen)
        board_id = memory.store.get_session(SESSION).board_session_id
        memory.board.update_session(board_id, {"Current Context": ["Picked up again today."]})
        today = memory.board.row(board_id).updated_at
        assert today > _local("2026-10-01T09:47:00Z")
        memory.pipeline.summarize_session(SESSION)
        assert memory.board.row(board_id).updated_at == today
