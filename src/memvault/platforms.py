"""What differs between Windows and the POSIX systems, in one place, on the standard
library alone (the hook imports it too).

Three things live here:

* **File names Windows accepts.** No ``<>:"/\\|?*`` or control characters, no trailing dot
  or space, and none of the device names (``CON``, ``PRN``, ``AUX``, ``NUL``, ``COM1``…,
  ``LPT1``…), which Windows reserves whatever extension follows (``nul.md`` too). A vault
  synced between machines has to hold names every one of them can write.
* **Command lines a host runs on Windows.** Claude Code runs a hook's command through Git
  Bash, which takes a backslash for an escape (``C:\\Users`` reaches it as ``C:Users``);
  Cursor runs it through PowerShell, where a quoted program must follow the call operator
  ``&``. A forward-slash path Windows accepts, and none of these shells changes: so the
  program is written with forward slashes, bare when it holds nothing a shell reads
  (which every shell then runs alike), quoted for the host's shell otherwise.
* **Whether a process is alive.** ``os.kill(pid, 0)`` asks that on POSIX; on Windows the
  same call ends the process (``TerminateProcess``), so Windows asks the kernel instead.
"""

from __future__ import annotations

import os
import re
import shlex
import sys

TYPE_CHECKING = False  # typing is not imported at run time: the hook pays for every module
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# -- file names ---------------------------------------------------------------------------

_DEVICES = {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
_DEVICES |= {f"{kind}{n}" for kind in ("COM", "LPT") for n in (*"123456789", "¹", "²", "³")}
_NOT_IN_NAMES = re.compile(r'[<>:"/\\|?*\x00-\x1f]')


def is_reserved_name(name: str) -> bool:
    """Whether Windows reserves ``name`` for a device: its part before the first dot,
    trailing spaces aside, is one of them, in any case (``con``, ``NUL.md``, ``Com1 .txt``)."""
    return name.split(".", 1)[0].rstrip(" ").upper() in _DEVICES


def windows_name_problem(name: str) -> str | None:
    """Why Windows cannot hold a file or folder called ``name``; None when it can."""
    if not name or name in (".", ".."):
        return f"{name!r} is not a file name"
    bad = sorted(set(_NOT_IN_NAMES.findall(name)))
    if bad:
        return f"{name!r} holds {' '.join(repr(c) for c in bad)}, which Windows refuses in names"
    if name[-1] in ". ":
        return f"{name!r} ends with a dot or a space, which Windows drops"
    if is_reserved_name(name):
        return f"{name!r} is a device name on Windows ({name.split('.', 1)[0].strip()})"
    return None


def windows_safe_stem(stem: str) -> str:
    """``stem`` (a name before its extension, already free of the characters Windows
    refuses) made one Windows accepts: trailing dots and spaces go, and a device name gets
    an underscore (``CON`` is ``CON_``), which every system then reads the same."""
    stem = stem.rstrip(". ")
    if is_reserved_name(stem):
        head, dot, tail = stem.partition(".")
        stem = f"{head.rstrip(' ')}_{dot}{tail}"
    return stem


# -- command lines ------------------------------------------------------------------------

POSIX = "sh"  # macOS and Linux: a POSIX shell
GIT_BASH = "bash"  # Windows: Claude Code's hook shell
POWERSHELL = "powershell"  # Windows: Cursor's hook shell
CMD = "cmd"  # Windows: the Command Prompt, where printed commands are pasted

# A program path no shell reads anything in: letters of any script, digits, - _ . : /
_PLAIN = re.compile(r"[\w\-.:/]+")
# What a double-quoted word still expands in one of the Windows shells above.
_EXPANDED = {"$": "Git Bash and PowerShell", "`": "Git Bash and PowerShell", "%": "cmd"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class UnquotableCommand(ValueError):
    """A program path that a host's shell on Windows would read differently than written."""


def windows_command(program: str, args: Sequence[str], shell: str) -> str:
    """The command line that runs ``program`` with ``args`` (plain words: a host name) in
    ``shell`` on Windows: forward slashes, the program bare when it can be, else in double
    quotes (after ``&`` for PowerShell). ``UnquotableCommand`` for a path holding a
    character the shell would still expand (``$``, a backtick, ``%``) or a double quote."""
    program = program.replace("\\", "/")
    for word in args:
        if not _PLAIN.fullmatch(word):
            raise UnquotableCommand(f"{word!r} is not a plain word for a command line")
    if _PLAIN.fullmatch(program) and not program.startswith("-"):
        return " ".join((program, *args))
    for char, where in _EXPANDED.items():
        if char in program:
            raise UnquotableCommand(
                f"the path {program} holds {char!r}, which {where} expand even in quotes: "
                "install memvault in a folder without it"
            )
    if '"' in program:
        raise UnquotableCommand(f"the path {program} holds a double quote")
    call = "& " if shell == POWERSHELL else ""
    return " ".join((f'{call}"{program}"', *args))


def printed_command(words: Sequence[str], shell: str) -> str:
    """``words`` as one line to paste: into a POSIX shell, or into a Command Prompt (the
    Windows rules the C runtime and schtasks parse arguments by)."""
    if shell == POSIX:
        return shlex.join(words)
    import subprocess  # only on this path: the hook never prints commands

    return subprocess.list2cmdline(list(words))


def command_program(command: str) -> str | None:
    """The program a host's hook command line starts, as written: past ``NAME=value``
    words and PowerShell's ``&``, without quotes. Windows paths keep their backslashes."""
    # A backslash is a Windows path's separator (memvault's own POSIX lines quote with ''),
    # which a POSIX reading would take for an escape.
    posix = "\\" not in command
    try:
        words = shlex.split(command, posix=posix)
    except ValueError:
        words = command.split()
    while words and (words[0] == "&" or _ASSIGNMENT.match(words[0])):
        words = words[1:]
    if not words:
        return None
    program = words[0]
    if not posix and len(program) >= 2 and program[0] == program[-1] and program[0] in "\"'":
        program = program[1:-1]
    return program


def program_name(program: str) -> str:
    """The file name of ``program``, lowercased, whichever separator its path uses."""
    return program.replace("\\", "/").rsplit("/", 1)[-1].lower()


# -- processes ----------------------------------------------------------------------------

_STILL_ACTIVE = 259  # GetExitCodeProcess's answer while a process runs
_QUERY_LIMITED_INFORMATION = 0x1000
_ACCESS_DENIED = 5


def process_alive(pid: int, *, kernel32: Any = None) -> bool:
    """Whether a process ``pid`` exists (a zombie counts: callers look closer on POSIX).
    On Windows ``kernel32`` is asked (Windows's own, loaded on first use, unless one is
    handed in)."""
    if pid <= 0:
        return False
    if kernel32 is None and sys.platform != "win32":
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True  # alive, someone else's
        except OSError:
            return False
        return True
    return _windows_alive(pid, kernel32 or _kernel32())


def _kernel32() -> Any:
    import ctypes
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.OpenProcess.restype = wintypes.HANDLE
    kernel32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
    kernel32.GetExitCodeProcess.argtypes = (wintypes.HANDLE, ctypes.POINTER(wintypes.DWORD))
    kernel32.CloseHandle.argtypes = (wintypes.HANDLE,)
    kernel32.last_error = ctypes.get_last_error
    return kernel32


def _windows_alive(pid: int, kernel32: Any) -> bool:
    import ctypes

    handle = kernel32.OpenProcess(_QUERY_LIMITED_INFORMATION, False, pid)
    if not handle:
        # Another user's process cannot be opened and is alive; a gone one cannot either.
        return kernel32.last_error() == _ACCESS_DENIED
    try:
        code = ctypes.c_ulong(0)
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return True  # it could be opened, so it exists
        return code.value == _STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)
