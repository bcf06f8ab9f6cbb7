"""What differs on Windows, exercised here: the names Windows refuses, the program a hook
command line starts, and asking whether a process lives without ending it."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest

from memvault import platforms, server_process
from memvault.platforms import (
    command_program,
    is_reserved_name,
    process_alive,
    windows_name_problem,
    windows_safe_stem,
)


@pytest.mark.parametrize(
    "name", ["CON", "con", "nul.md", "Aux.tar.gz", "COM1", "lpt9.md", "COM¹", "PRN .md"]
)
def test_device_names_are_reserved_whatever_follows_them(name):
    assert is_reserved_name(name)
    assert "device name" in (windows_name_problem(name) or "")


@pytest.mark.parametrize("name", ["CONSOLE", "con - 2026-01-01 - x.md", "COM10", "nulls", "我的"])
def test_names_that_only_look_like_devices_are_not(name):
    assert not is_reserved_name(name)
    assert windows_name_problem(name) is None


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("a:b.md", "':'"),
        ("why?.md", "'?'"),
        ('say "hi".md', "'\"'"),
        ("a\\b", "'\\\\'"),
        ("trailing.", "ends with a dot"),
        ("trailing ", "ends with a dot or a space"),
    ],
)
def test_a_name_windows_refuses_is_said_why(name, problem):
    assert problem in (windows_name_problem(name) or "")


@pytest.mark.parametrize(
    ("stem", "safe"),
    [
        ("CON", "CON_"),
        ("nul", "nul_"),
        ("aux.notes", "aux_.notes"),
        ("notes. ", "notes"),
        ("x", "x"),
    ],
)
def test_a_stem_is_made_one_windows_accepts(stem, safe):
    assert windows_safe_stem(stem) == safe
    assert windows_name_problem(f"{safe}.md") is None


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("MEMVAULT_HOME='/a b' '/x y/memvault-hook' claude-code", "/x y/memvault-hook"),
        ("/venv/bin/memvault-hook cursor", "/venv/bin/memvault-hook"),
        ('& "C:/a b/memvault-hook.exe" cursor', "C:/a b/memvault-hook.exe"),
        (
            r"C:\Users\me\Scripts\memvault-hook.exe claude-code",
            r"C:\Users\me\Scripts\memvault-hook.exe",
        ),
        (r'"C:\Program Files\x\memvault-hook.exe" cursor', r"C:\Program Files\x\memvault-hook.exe"),
        ("", None),
    ],
)
def test_the_program_of_a_hook_command_line_is_read_as_written(command, program):
    assert command_program(command) == program


def test_a_running_process_is_alive_and_a_finished_one_is_not():
    """On every platform, Windows included: the portable workflow runs this there."""
    assert process_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not process_alive(child.pid)
    assert not process_alive(0) and not process_alive(-1)


class _Kernel32:
    """Windows's answers, as kernel32 gives them, for the branch this machine cannot load:
    pids it knows, their exit codes (259 while running), and the error for the others."""

    def __init__(self, codes: dict[int, int], error: int = 87):
        self.codes, self.error, self.closed = codes, error, []

    def OpenProcess(self, access: int, inherit: bool, pid: int) -> int:
        return pid if pid in self.codes else 0

    def GetExitCodeProcess(self, handle: int, code: object) -> bool:
        code._obj.value = self.codes[handle]  # type: ignore[attr-defined]
        return True

    def CloseHandle(self, handle: int) -> bool:
        self.closed.append(handle)
        return True

    def last_error(self) -> int:
        return self.error


def test_on_windows_the_kernel_is_asked_and_no_signal_is_sent(monkeypatch):
    """``os.kill(pid, 0)`` on Windows is TerminateProcess: asking would end the server."""
    sent = []
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(os, "kill", lambda *args: sent.append(args))
    kernel = _Kernel32({41: 259, 42: 0})
    assert process_alive(41, kernel32=kernel)
    assert not process_alive(42, kernel32=kernel)  # exited with status 0
    assert not process_alive(43, kernel32=kernel)  # no such process
    assert process_alive(44, kernel32=_Kernel32({}, error=5))  # another user's
    assert kernel.closed == [41, 42] and sent == []


def test_the_servers_liveness_check_sends_no_signal_on_windows(monkeypatch):
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "memvault"])
    try:
        sent = []
        monkeypatch.setattr(sys, "platform", "win32")
        monkeypatch.setattr(os, "kill", lambda *args: sent.append(args))
        answers = {server.pid: 259, server.pid + 1: 1}
        monkeypatch.setattr(platforms, "_kernel32", lambda: _Kernel32(answers))
        assert server_process.running(server.pid)
        assert not server_process.running(server.pid + 1)
        assert sent == []
    finally:
        monkeypatch.undo()  # os.kill is the real one again
        server.kill()
        server.wait()


def test_the_kernel_stand_in_fills_a_ctypes_out_value_as_kernel32_does():
    code = ctypes.c_ulong(0)
    _Kernel32({7: 259}).GetExitCodeProcess(7, ctypes.byref(code))
    assert code.value == 259
