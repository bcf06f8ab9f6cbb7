"""A vault write handed to the owner answers as the owner's run did: its value, or its
error as the error's kind, raised again on the replica that queued it."""

from __future__ import annotations

import pytest

from memvault.errors import InvalidInput, MemvaultError, StoreUnavailable, VaultUnwritable
from memvault.memory.owner import encode_error
from memvault.vault.board import BoardFormatError


def _raising(error: Exception):
    def write(*args, **kwargs):
        raise error

    return write


@pytest.mark.parametrize(
    "error",
    [
        InvalidInput("no memory 'x'", fields=["memoryId"]),
        StoreUnavailable("the disk is full"),
        VaultUnwritable("the folder cannot be written"),
        BoardFormatError("two tables"),
        MemvaultError("something else"),
    ],
)
def test_an_error_crosses_as_its_kind(memory, error):
    memory.owner.route({"failing": _raising(error)})
    answer = memory.owner.apply("failing", {"args": [], "kwargs": {}})
    assert answer == encode_error(error)
    memory.owner.claim.submit = lambda kind, payload: answer  # the owner's answer, as queued
    memory.owner.claim.owner = False
    with pytest.raises(type(error)) as raised:
        memory.owner.forward("failing", (), {})
    assert str(raised.value) == str(error)
    if isinstance(error, InvalidInput):
        assert raised.value.fields == ["memoryId"]


def test_an_unknown_kind_is_a_memvault_error(memory):
    answer = memory.owner.apply("no-such-write", {})
    assert answer["error"] == "error"
    assert isinstance(MemvaultError.of_kind("from-a-newer-version", "x"), MemvaultError)


def test_a_write_runs_the_parts_own_method_on_the_owner(memory):
    answer = memory.owner.apply(
        "register_session", {"args": [], "kwargs": {"manual": True, "topic": "Handed over"}}
    )
    report = answer["value"]["__report__"]
    assert report["ok"] and memory.board.row_in_file(report["session_id"]).topic == "Handed over"


def test_a_write_asked_with_arguments_the_owner_does_not_take_is_answered_an_error(memory):
    """A replica of another version may ask with a keyword this one does not know: the
    answer says so, and nothing is written."""
    rows = len(memory.board.rows())
    answer = memory.owner.apply(
        "register_session", {"args": [], "kwargs": {"topic": "Newer", "lived": "2026-10-01"}}
    )
    assert answer["error"] == "error"
    assert "register_session" in answer["message"] and "lived" in answer["message"]
    assert "same memvault version" in answer["message"]
    assert len(memory.board.rows()) == rows


def test_a_result_of_a_kind_this_replica_does_not_know_is_answered_an_error(memory):
    answer = memory.owner.apply(
        "register_session", {"args": [{"__fields__": ["Unknown", {}]}], "kwargs": {}}
    )
    assert answer["error"] == "error" and "register_session" in answer["message"]


def test_a_write_that_fails_unexpectedly_is_answered_its_failure(memory):
    """What the write would have raised in place, its caller is told elsewhere: a 500."""
    memory.owner.route({"failing": _raising(RuntimeError("the disk said no"))})
    answer = memory.owner.apply("failing", {"args": [], "kwargs": {}})
    assert answer["error"] == "error" and "the disk said no" in answer["message"]
    memory.owner.claim.submit = lambda kind, payload: answer
    memory.owner.claim.owner = False
    with pytest.raises(MemvaultError, match="the disk said no"):
        memory.owner.forward("failing", (), {})
