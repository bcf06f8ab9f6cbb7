"""Extraction stays linear in what it reads: long failure output, many files, and text
built to make a regular expression backtrack do not blow it up. The time limits are
generous guards against quadratic work, not performance targets."""

from __future__ import annotations

import time

from memvault.derive.entities import extract_graph
from memvault.derive.failures import frames, signatures
from memvault.derive.names import Names
from memvault.domain import Event
from tests.derive.reading import names, relations
from tests.pipeline.sessions import ROOT, bash, edit, prompt, reply

EDITS = 1_500
FAILURES = 1_500


def event(seq: int, hook: str, data: dict) -> Event:
    at = f"2026-11-30T{9 + seq // 3600:02d}:{seq // 60 % 60:02d}:{seq % 60:02d}.000Z"
    return Event(seq, "big", f"big-{seq}", hook, "demo-app", ROOT, None, at, at, at, data)


def test_a_big_batch_of_edits_and_long_failures_extracts_in_bounded_time():
    events = [
        event(
            n,
            "post_tool_use",
            {
                "tool_name": "Edit",
                "tool_input": {"file_path": f"{ROOT}/{_edited(n)}", "new_string": "x=1"},
                "tool_output": "ok",
            },
        )
        for n in range(EDITS)
    ]
    events += [
        event(
            EDITS + n,
            "post_tool_failure",
            {
                "tool_name": "Bash",
                "tool_input": {"command": f"pytest tests/t{n}.py"},
                "error": f"E   KeyError: 'k{n}'\n{_edited(EDITS - 1 - n % 100)}\n"
                + "some log output line that goes on and on\n" * 100,
            },
        )
        for n in range(FAILURES)
    ]

    started = time.perf_counter()
    delta = extract_graph(events, [])
    elapsed = time.perf_counter() - started

    assert elapsed < 10, f"{elapsed:.1f} s"
    assert len(delta.of_kind("file")) == EDITS
    assert len(delta.of_kind("error")) == FAILURES
    # A failure still names the files the session worked on (those recent enough).
    assert ("src/mod1499/file1499.py", "causes", "KeyError: 'k0'") in relations(delta, "causes")


def test_a_failure_is_read_from_its_beginning_and_its_end():
    middle = "noise that says nothing at all\n" * 5_000
    text = f"Error: listen EADDRINUSE: address in use\n{middle}KeyError: 'email'\n"

    delta = extract_graph([event(1, "post_tool_failure", _failed("npm start", text))], [])

    assert names(delta, "error") == ["EADDRINUSE: address in use", "KeyError: 'email'"]


def test_stack_frame_parsing_is_linear_on_hostile_text():
    started = time.perf_counter()
    frames("at x (" * 8_000)
    frames("at x " * 8_000)
    frames("    at " + "a" * 50_000 + ":1")
    signatures("A" * 50_000 + "." * 50_000)
    assert time.perf_counter() - started < 2


def test_stack_frames_are_still_found():
    stack = (
        "Error: boom\n"
        "    at Server.setupListenHandle [as _listen2] (node:net:1817:16)\n"
        "    at Object.<anonymous> (/app/src/server.js:10:5)\n"
        "    at src/api.ts:3:1\n"
    )
    assert frames(stack) == ["node:net", "/app/src/server.js", "src/api.ts"]


def names_in(text: str, name: str) -> bool:
    return Names(text).names(name)


def test_a_name_next_to_cjk_text_is_named():
    assert names_in("决定改用httpx替换requests", "httpx")
    assert names_in("决定改用httpx替换requests", "requests")
    assert names_in("决定改用 httpx 替换 requests", "httpx")
    assert names_in("We decided to use httpx instead.", "httpx")
    assert names_in("see src/login.py:12 and the rest", "src/login.py")
    assert names_in("FAILED tests/test_login.py::test_x", "tests/test_login.py")
    assert names_in("pinned @types/node, fine", "@types/node")
    assert names_in("HTTPX it is", "httpx")


def test_a_name_inside_a_longer_name_is_not_named():
    assert not names_in("use httpx2 now", "httpx")
    assert not names_in("use pyhttpx now", "httpx")
    assert not names_in("/code/app/src/login.py", "src/login.py")
    assert not names_in("src/login.py-old", "src/login.py")
    assert not names_in("module_httpx", "httpx")
    assert not names_in("x", "x")


def test_a_chinese_decision_uses_the_library_it_names():
    steps = [
        prompt("把 profile 客户端换掉"),
        bash("pip install httpx", "Successfully installed httpx-0.27.0"),
        reply("我们决定改用httpx替换requests。"),
        edit(f"{ROOT}/src/profile.py", "import requests", "import httpx"),
    ]
    events = [event(n, hook, data) for n, (hook, data) in enumerate(steps)]

    delta = extract_graph(events, [])

    (decision,) = names(delta, "decision")
    assert (decision, "uses", "httpx") in relations(delta, "uses")


def _edited(n: int) -> str:
    return f"src/mod{n}/file{n}.py"


def _failed(command: str, error: str) -> dict:
    return {"tool_name": "Bash", "tool_input": {"command": command}, "error": error}
