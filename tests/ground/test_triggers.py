"""Trigger phrases in prompts, Chinese (either script) and English."""

from __future__ import annotations

import pytest

from memvault.triggers import recognise

SID = "2026-05-25-1318-cursor-main-agent"


@pytest.mark.parametrize(
    ("prompt", "operation", "session_id"),
    [
        ("註冊 memory session", "register", None),
        ("補註冊 memory", "register", None),
        ("手動註冊 memory", "register", None),
        ("补注册 memory", "register", None),
        ("手动注册memory", "register", None),
        ("please register memory session", "register", None),
        ("狀態更新", "update", None),
        ("memory session 狀態更新", "update", None),
        ("更新 memory session", "update", None),
        ("更新 memory 狀態", "update", None),
        ("更新 memory 状态", "update", None),
        ("整理這個 session", "update", None),
        ("整理这个 session", "update", None),
        ("update memory session", "update", None),
        (f"接續 memory {SID}", "continue", SID),
        (f"接續 memory session {SID}", "continue", SID),
        (f"接续 memory {SID}", "continue", SID),
        (f"引用 memory {SID}", "continue", SID),
        (f"沿用 memory {SID}", "continue", SID),
        (f"continue memory {SID}", "continue", SID),
        (f"解除引用 memory {SID}", "release", SID),
        (f"解除 memory 引用 {SID}", "release", SID),
        (f"release memory reference {SID}", "release", SID),
        ("整理 memory", "organize", None),
        ("清理 memory", "organize", None),
        ("organize memory", "organize", None),
        (f"封存 memory session {SID}", "archive", SID),
        (f"archive memory session {SID}", "archive", SID),
    ],
)
def test_each_phrase_maps_to_its_operation(prompt, operation, session_id):
    trigger = recognise(prompt)
    assert trigger is not None, prompt
    assert (trigger.operation, trigger.session_id) == (operation, session_id)


def test_phrases_are_found_inside_a_longer_prompt():
    trigger = recognise(f"好的，先 接續 memory {SID}，然後繼續改 API")
    assert (trigger.operation, trigger.session_id) == ("continue", SID)


def test_release_is_not_mistaken_for_continue():
    assert recognise(f"解除引用 memory {SID}").operation == "release"


def test_updating_this_session_is_not_organizing_memory():
    assert recognise("整理這個 session").operation == "update"
    assert recognise("整理 memory").operation == "organize"


@pytest.mark.parametrize(
    "prompt",
    ["fix the login bug", "memory leak in the parser", "接續 memory", "引用 memory 明天再說", ""],
)
def test_ordinary_prompts_and_phrases_without_their_id_are_not_triggers(prompt):
    assert recognise(prompt) is None


def test_ids_are_read_in_lower_case():
    assert recognise(f"接續 memory {SID.upper()}").session_id == SID
