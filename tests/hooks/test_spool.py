"""Nothing is lost: events a hook could not deliver wait in the spool until a server takes
them in, once each."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time

from memvault import Memory
from memvault.hook import spool
from memvault.ingest.spool import ABANDONED_AFTER, SpoolDrain, folder_of
from memvault.ingest.spool import drain as drain_folder
from tests.helpers import Server, envelope, wait_for
from tests.hooks.runner import (
    answer,
    dead_url,
    fixture,
    hook_env,
    placed,
    run_hook,
    spooled,
    stored,
)


def drain(memory):
    """The server's drain of the memory's spool, as ``Serving`` hands it its parts."""
    return drain_folder(
        folder_of(memory.settings.home),
        memory.capture.observe_many,
        memory.board.session_seen,
        limit=memory.settings.max_body_bytes,
    )


def tool_calls(project, session, count):
    """``count`` distinct Claude Code tool calls of one session."""
    base = placed(fixture("claude-code", "PostToolUse"), project, session)
    return [{**base, "tool_use_id": f"toolu_{n:03d}"} for n in range(count)]


def test_with_the_server_down_events_are_spooled_and_arrive_once_when_it_starts(tmp_path, project):
    home = tmp_path / "home"
    session = "spooled-session"
    calls = tool_calls(project, session, 8)
    server = Server(home)  # not started yet: its port has nobody behind it
    env = hook_env(home, server.url)

    for call in calls:
        started = time.monotonic()
        result = run_hook("claude-code", call, env, cwd=project)
        assert time.monotonic() - started < 1.5  # a sanity bound, not a benchmark
        assert answer(result) is None
        assert b"waits in" in result.stderr
    assert len(spooled(home)) == len(calls)

    server.start()
    try:
        wait_for(lambda: not spooled(home), timeout=30)
        events = stored(home, session)
    finally:
        server.stop()
    assert sorted(e.client_event_id for e in events) == [
        f"claude-code:PostToolUse:toolu_{n:03d}" for n in range(len(calls))
    ]
    with Memory.open(home=home) as memory:
        assert memory.reads.session(session).board_session_id  # a board row, as a live event gets


def test_concurrent_hooks_spooling_at_once_lose_nothing(tmp_path, project):
    home = tmp_path / "home"
    env = hook_env(home, dead_url())
    calls = tool_calls(project, "busy-session", 100)

    def launch(batch):
        running = [
            subprocess.Popen(
                [sys.executable, "-m", "memvault.hook", "claude-code"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
            for _ in batch
        ]
        for process, call in zip(running, batch, strict=True):
            process.communicate(json.dumps(call).encode(), timeout=120)
            assert process.returncode == 0

    halves = [threading.Thread(target=launch, args=(calls[i::2],)) for i in range(2)]
    for half in halves:
        half.start()
    for half in halves:
        half.join()

    files = spooled(home)
    assert len(files) == 100
    ids = {json.loads(f.read_bytes())["eventId"] for f in files}
    assert len(ids) == 100
    with Memory.open(home=home) as memory:
        assert drain(memory).delivered == 100
        assert len(memory.reads.events("busy-session")) == 100
    assert spooled(home) == []


def test_an_event_stored_before_is_cleared_from_the_spool_not_stored_again(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        memory.observe(envelope("s1", 1))
        folder = tmp_path / "home" / "spool"
        spool.put(str(folder), json.dumps(envelope("s1", 1)).encode())
        spool.put(str(folder), json.dumps(envelope("s1", 2)).encode())
        assert memory.health.report().spooled == 2  # health says what waits in the spool
        drained = drain(memory)
        assert memory.health.report().spooled == 0
        assert (drained.delivered, drained.duplicates, drained.set_aside) == (1, 1, 0)
        assert [e.client_event_id for e in memory.reads.events("s1")] == ["s1-e1", "s1-e2"]
        assert spooled(tmp_path / "home") == []


def test_events_are_taken_in_the_order_they_were_spooled(tmp_path):
    folder = tmp_path / "home" / "spool"
    for n in (3, 1, 2):
        spool.put(str(folder), json.dumps(envelope("s1", n)).encode())
    with Memory.open(home=tmp_path / "home") as memory:
        drain(memory)
        by_arrival = sorted(memory.reads.events("s1"), key=lambda e: e.seq)
        assert [e.client_event_id for e in by_arrival] == ["s1-e3", "s1-e1", "s1-e2"]


def test_a_file_that_is_not_an_event_is_set_aside_and_logged(tmp_path, caplog):
    home = tmp_path / "home"
    folder = home / "spool"
    spool.put(str(folder), b"{not json")
    spool.put(str(folder), json.dumps({**envelope("s1", 1), "sessionId": ""}).encode())
    spool.put(str(folder), json.dumps(envelope("s1", 2)).encode())
    with caplog.at_level(logging.WARNING), Memory.open(home=home) as memory:
        drained = drain(memory)
        assert (drained.delivered, drained.set_aside) == (1, 2)
        assert [e.client_event_id for e in memory.reads.events("s1")] == ["s1-e2"]
    bad = sorted(p.name for p in (folder / spool.BAD).iterdir())
    assert len(bad) == 2
    assert "malformed JSON" in caplog.text and "sessionId" in caplog.text
    assert all(name in caplog.text for name in bad)


def test_a_writer_that_died_leaves_a_temporary_file_set_aside_only_when_old(tmp_path):
    home = tmp_path / "home"
    folder = home / "spool"
    folder.mkdir(parents=True)
    fresh = folder / ".00000000000000000002-2-bb.json.tmp"
    old = folder / ".00000000000000000001-1-aa.json.tmp"
    fresh.write_bytes(b'{"hookType": "post_')  # a writer still at work
    old.write_bytes(b'{"hookType": "post_')
    long_ago = time.time() - ABANDONED_AFTER - 60
    os.utime(old, (long_ago, long_ago))
    with Memory.open(home=home) as memory:
        assert drain(memory).set_aside == 1
    assert fresh.exists() and not old.exists()
    assert [p.name for p in (folder / spool.BAD).iterdir()] == [old.name.lstrip(".")]


def test_the_drain_thread_takes_in_events_spooled_while_it_runs(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home=home) as memory:
        running = SpoolDrain(
            folder_of(memory.settings.home),
            memory.capture.observe_many,
            memory.board.session_seen,
            interval=0.05,
        )
        running.start()
        try:
            spool.put(str(home / "spool"), json.dumps(envelope("late", 1)).encode())
            wait_for(lambda: memory.reads.events("late"), timeout=10)
        finally:
            running.stop()


def test_turn_ends_taken_from_the_spool_signal_their_sessions(tmp_path, monkeypatch):
    """A spooled ``stop``, ``session_end`` or ``subagent_stop`` brings its session's summary
    up to date, as it would have delivered live; one stored before signalled back then."""
    home = tmp_path / "home"
    folder = str(home / "spool")
    with Memory.open(home=home) as memory:
        memory.observe(envelope("told", 1, hookType="stop"))
        for n, (session, hook_type) in enumerate(
            [
                ("stopped", "stop"),
                ("ended", "session_end"),
                ("subagent", "subagent_stop"),
                ("working", "post_tool_use"),
                ("told", "stop"),
            ]
        ):
            spool.put(folder, json.dumps(envelope(session, n, hookType=hook_type)).encode())
        spool.put(folder, json.dumps(envelope("told", 1, hookType="stop")).encode())
        ended: list[str] = []
        monkeypatch.setattr(memory.pipeline, "turn_ended", ended.append)
        monkeypatch.setattr(memory._pipeline, "running", True)
        try:
            drained = drain(memory)
        finally:
            monkeypatch.setattr(memory._pipeline, "running", False)
    assert (drained.delivered, drained.duplicates) == (5, 1)
    assert sorted(ended) == ["ended", "stopped", "subagent", "told"]


def test_a_fifo_in_the_spool_is_set_aside_and_the_events_behind_it_arrive(tmp_path, project):
    """A FIFO named like an event (``mkfifo spool/x.json``) is never opened: opening it
    would wait for a writer forever, and every event behind it with it."""
    home = tmp_path / "home"
    session = "behind-a-fifo"
    server = Server(home)
    env = hook_env(home, server.url)
    for call in tool_calls(project, session, 3):
        assert b"waits in" in run_hook("claude-code", call, env, cwd=project).stderr
    fifo = home / "spool" / "x.json"
    os.mkfifo(fifo)
    server.start()
    try:
        wait_for(lambda: len(stored(home, session)) == 3, timeout=30)
        wait_for(lambda: (home / "spool" / spool.BAD / "x.json").exists(), timeout=10)
        assert spooled(home) == []
    finally:
        with contextlib.suppress(OSError):  # a reader stuck on it: let it go
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        server.stop()
    assert "is not a regular file but a FIFO" in (home / "server.log").read_text()


def test_files_over_the_body_limit_or_not_files_are_set_aside_not_retried(tmp_path):
    home = tmp_path / "home"
    folder = home / "spool"
    large = envelope("s1", 1, data={"tool_output": "y" * (spool.MAX_BODY_BYTES + 10)})
    spool.put(str(folder), json.dumps(large).encode())
    (folder / "00000000000000000000-folder.json").mkdir()
    (folder / "00000000000000000001-link.json").symlink_to(folder.parent)
    spool.put(str(folder), json.dumps(envelope("s1", 2)).encode())
    with Memory.open(home=home) as memory:
        drained = drain(memory)
        assert (drained.delivered, drained.set_aside) == (1, 3)
        assert [e.client_event_id for e in memory.reads.events("s1")] == ["s1-e2"]
        assert not drain(memory)  # nothing left to try again
    assert len(list((folder / spool.BAD).iterdir())) == 3
    assert spooled(home) == []
