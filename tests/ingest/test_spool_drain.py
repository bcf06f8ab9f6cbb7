"""A spool that never jams: a file that cannot be read as an envelope, whatever the reason,
goes to ``spool/bad/`` with the reason logged, and the events around it are delivered in
the same pass."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import httpx
import pytest

from memvault import Memory
from memvault.hook import spool
from memvault.ingest.spool import drain as drain_folder
from memvault.ingest.spool import folder_of
from memvault.jsontext import MAX_DEPTH
from tests.helpers import Server, envelope, wait_for


def drain(memory):
    """The server's drain of the memory's spool, as ``Serving`` hands it its parts."""
    return drain_folder(
        folder_of(memory.settings.home), memory.capture.observe_many, memory.board.session_seen
    )


def too_deep(levels: int) -> bytes:
    """An envelope whose data is ``levels`` lists deep."""
    body = json.dumps(envelope("deep", 1, data="DATA"))
    return body.replace('"DATA"', "[" * levels + "]" * levels).encode()


def set_aside(folder: Path) -> list[str]:
    bad = folder / spool.BAD
    return sorted(p.name for p in bad.iterdir()) if bad.is_dir() else []


def test_a_spool_file_nested_too_deep_goes_to_bad_and_the_rest_drain(tmp_path):
    home = tmp_path / "home"
    folder = home / "spool"
    spool.put(str(folder), json.dumps(envelope("s1", 1)).encode())
    deep = spool.put(str(folder), too_deep(5000))  # deeper than any JSON parser goes
    spool.put(str(folder), json.dumps(envelope("s1", 2)).encode())
    server = Server(home).start()
    try:
        events = f"{server.url}/agentmemory/observations"

        def delivered():
            """both good events are stored and their files drained (a file goes once its
            event is stored, a moment after)"""
            found = httpx.get(events, params={"sessionId": "s1"}).json()["observations"]
            return len(found) == 2 and not list(folder.glob("*.json"))

        wait_for(delivered, timeout=30)
        assert sorted(p.name for p in folder.glob("*.json")) == []
        assert set_aside(folder) == [deep]
        assert f"nested deeper than {MAX_DEPTH} levels" in server.log()
        assert "Traceback" not in server.log()
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (too_deep(MAX_DEPTH + 1), f"nested deeper than {MAX_DEPTH} levels"),
        (too_deep(1500), f"nested deeper than {MAX_DEPTH} levels"),
        (b'{"hookType": "stop", "sessionId": "\xff"}', "not valid UTF-8"),
        (b'{"hookType": "stop", "data": 1' + b"0" * 5000 + b"}", "digits"),
        (b'{"hookType": "stop", "data": "\\udc00"}', "lone surrogate"),
    ],
    ids=[
        "deeper-than-the-limit",
        "deeper-than-the-parser",
        "not-utf8",
        "huge-integer",
        "surrogate",
    ],
)
def test_a_spool_file_that_is_not_an_envelope_is_set_aside_with_its_reason(
    tmp_path, caplog, content, reason
):
    home = tmp_path / "home"
    folder = home / "spool"
    spool.put(str(folder), json.dumps(envelope("s1", 1)).encode())
    bad = spool.put(str(folder), content)
    spool.put(str(folder), json.dumps(envelope("s1", 2)).encode())
    with caplog.at_level(logging.WARNING), Memory.open(home=home) as memory:
        drained = drain(memory)
        assert (drained.delivered, drained.set_aside) == (2, 1)
        assert [e.client_event_id for e in memory.reads.events("s1")] == ["s1-e1", "s1-e2"]
    assert set_aside(folder) == [bad]
    assert reason in caplog.text and bad in caplog.text


def test_a_spool_link_is_set_aside_unread_and_the_rest_drain(tmp_path, caplog):
    """A link in the spool, here to a file the kernel refuses to read from the start, is
    never followed: only regular files are read as events."""
    unreadable = Path("/proc/self/mem")
    if not unreadable.exists():
        pytest.skip("needs /proc/self/mem, a file every read of which fails")
    home = tmp_path / "home"
    folder = home / "spool"
    spool.put(str(folder), json.dumps(envelope("s1", 1)).encode())
    name = spool.put(str(folder), b"{}")  # a name in its place in the order
    (folder / name).unlink()
    (folder / name).symlink_to(unreadable)
    spool.put(str(folder), json.dumps(envelope("s1", 2)).encode())
    with caplog.at_level(logging.WARNING), Memory.open(home=home) as memory:
        drained = drain(memory)
        assert (drained.delivered, drained.set_aside) == (2, 1)
        assert len(memory.reads.events("s1")) == 2
    assert set_aside(folder) == [name]
    assert "is not a regular file but a symbolic link" in caplog.text and name in caplog.text


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_spool_file_without_read_permission_is_set_aside_and_the_rest_drain(tmp_path, caplog):
    home = tmp_path / "home"
    folder = home / "spool"
    name = spool.put(str(folder), json.dumps(envelope("s1", 1)).encode())
    (folder / name).chmod(0)
    spool.put(str(folder), json.dumps(envelope("s1", 2)).encode())
    with caplog.at_level(logging.WARNING), Memory.open(home=home) as memory:
        drained = drain(memory)
        assert (drained.delivered, drained.set_aside) == (1, 1)
    assert set_aside(folder) == [name]
    assert "Permission denied" in caplog.text


def test_a_folder_named_like_a_spooled_event_is_set_aside_and_the_rest_drain(tmp_path, caplog):
    home = tmp_path / "home"
    folder = home / "spool"
    spool.put(str(folder), json.dumps(envelope("s1", 1)).encode())
    name = spool.put(str(folder), b"{}")
    (folder / name).unlink()
    (folder / name).mkdir()  # a name in its place in the order, but a folder
    spool.put(str(folder), json.dumps(envelope("s1", 2)).encode())
    with caplog.at_level(logging.WARNING), Memory.open(home=home) as memory:
        drained = drain(memory)
        assert (drained.delivered, drained.set_aside) == (2, 1)
    assert set_aside(folder) == [name]
    assert spool.pending(str(folder)) == []
