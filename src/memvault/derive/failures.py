"""Errors as entities: the recognizable signature of a failure, where it points, and which
of a pasted trace's frames are the project's code (``without_library_frames``).

A failure becomes an error entity only when it says what went wrong in a form that recurs:
an exception (``KeyError: 'user_id'``, ``requests.exceptions.ConnectionError: …``), a
compiler code (``error[E0382]``, ``error TS2345``), an errno (``EADDRINUSE``), a missing
command or module. "exited with status 1" names nothing and is left out.

Two failures are the same error when their signatures match once what varies between runs
is set aside: numbers, addresses and the folders of paths.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from memvault.derive.code import npm_package, python_package

MAX_ERRORS = 3
MESSAGE_LIMIT = 120
_SCANNED_LINES = 2_000

_EXCEPTION = re.compile(
    r"(?<![\w.])(?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Fault))(?::[ \t]+(.+)|[ \t]*$)"
)
_RUST = re.compile(r"\berror\[(E\d{4})\]:\s*(.+)")
_TYPESCRIPT = re.compile(r"\berror (TS\d{4}):\s*(.+)")
_ERRNO = re.compile(
    r"\b(E(?:NOENT|ACCES|ADDRINUSE|ADDRNOTAVAIL|CONNREFUSED|CONNRESET|TIMEDOUT|PERM|EXIST|"
    r"NOTFOUND|RESOLVE|PIPE|MFILE|NOSPC|ISDIR|NOTDIR|NOTEMPTY|AI_AGAIN))\b:?\s*(.*)"
)
_NOT_FOUND = re.compile(r"(?<![\w.+-])[\w.+-]+: command not found")
_MISSING_MODULE = re.compile(r"Cannot find module '([^']+)'")

_PY_MISSING = re.compile(r"No module named '?([\w.]+)'?")
_PY_FRAME = re.compile(r'File "([^"]+)", line \d+')
# "at fn (path:1:2)" or "at path:1:2". The function part stops at a parenthesis and both
# parts are bounded, so a line of "at x (at x (…" is read in linear time.
_JS_FRAME = re.compile(r"\bat (?:[^()\n]{0,300}? \()?((?:[A-Za-z]:)?[^\s()]{1,500}?):\d+:\d+\)?")

# Where a frame's code is the language's or a library's own, not the project's: its
# interpreter's or runtime's sources, an installed package, a toolchain's (``/rustc/<hash>``,
# Go's module cache), a built-in module (``node:internal``, Python's ``<frozen runpy>``).
_LIBRARY_PLACE = re.compile(
    r"[\\/](?:site-packages|dist-packages|node_modules|\.venv|venv|\.tox|\.nox)[\\/]"
    r"|[\\/]lib[\\/]python[\d.]*[\\/]|(?:^|[\s(\"'])/usr/(?:local/)?(?:lib|lib64|go|share|include)/"
    r"|/rustc/[0-9a-f]{7,}/|[\\/]\.(?:cargo|rustup)[\\/]|[\\/]go[\\/]pkg[\\/]mod[\\/]"
    r"|[\\/]\.m2[\\/]repository[\\/]|[\\/]\.gradle[\\/]caches[\\/]|[\\/]\.nuget[\\/]packages[\\/]"
    r"|\bnode:[a-z]|<frozen [\w.]+>"
)
# The names of the runtime's or a test framework's own code: Java, Kotlin, Scala, .NET
# (``org.junit.Assert.fail``), Rust (``core::panicking::panic_fmt``), Go (``testing.tRunner``).
_LIBRARY_CODE = re.compile(
    r"(?:java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|junit|org\.junit|org\.testng|"
    r"org\.gradle|org\.apache\.maven|android|androidx|dalvik|System|Microsoft)[./]"
    r"|<?(?:std|core|alloc|test)::|rust_begin_unwind|__rust|(?:runtime|testing|reflect|syscall)\."
)
# A frame on a line of its own: Python's ``File "…", line N`` (its source on the next line);
# JavaScript's, Java's and .NET's ``at name (place)``, ``at name(place)`` or ``at place:N``.
_PY_FRAME_LINE = re.compile(r"^\s*" + _PY_FRAME.pattern)
_AT_FRAME = re.compile(r"^\s*at\s+(?:(\S+?)\s*\(|\S+:\d)")
# A frame named on one line and placed on the next: Rust's "2: name" over "at path:41:9",
# Go's "pkg.Func(…)" over "<tab>path:33 +0x1d".
_RUST_NAME = re.compile(r"^\s*\d+:\s+(?:0x[0-9a-f]+\s+-\s+)?(\S+)\s*$")
_RUST_PLACE = re.compile(r"^\s+at\s+\S+:\d+:\d+\s*$")
_GO_NAME = re.compile(r"^(\S+)\([^()]*\)$")
_GO_PLACE = re.compile(r"^\t\S+:\d+(?:\s+\+0x[0-9a-f]+)?\s*$")
_FRAME_CHARS = 2_000  # no frame's line is longer; a longer line is read as text


def library_name(name: str) -> bool:
    """Whether ``name`` (a path written with slashes, a dotted or a ``::`` name) is the
    language's or a library's own: a path in an installed package or a runtime's sources,
    or a runtime's or test framework's namespace."""
    return bool(_LIBRARY_PLACE.search("/" + name.lstrip("/")) or _LIBRARY_CODE.match(name))


def without_library_frames(text: str) -> str:
    """``text`` without the stack frames of the language's or a library's own code (each
    frame's lines: the line naming it, its place, a Python frame's line of source), so what
    a pasted trace names is the project's code. Every other line is kept as written: a
    library's path in a sentence is only a word of it."""
    lines = text.split("\n")
    dropped = [False] * len(lines)
    for i, line in enumerate(lines):
        if dropped[i] or len(line) > _FRAME_CHARS:
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if _PY_FRAME_LINE.match(line):
            if _LIBRARY_PLACE.search(line):
                dropped[i] = True
                if following[:1] in (" ", "\t") and not _PY_FRAME_LINE.match(following):
                    dropped[i + 1] = True  # the frame's line of source
        elif at := _AT_FRAME.match(line):
            name = at.group(1)
            dropped[i] = bool(_LIBRARY_PLACE.search(line) or (name and _LIBRARY_CODE.match(name)))
        elif named := (_RUST_NAME.match(line) or _GO_NAME.match(line)):
            placed = len(following) <= _FRAME_CHARS and (
                _RUST_PLACE.match(following)
                if named.re is _RUST_NAME
                else _GO_PLACE.match(following)
            )
            if named.re is _GO_NAME and not placed:
                continue  # a call in a sentence, not a Go frame
            if _LIBRARY_CODE.match(named.group(1)) or (placed and _LIBRARY_PLACE.search(following)):
                dropped[i] = True
                if placed:
                    dropped[i + 1] = True
    if not any(dropped):
        return text
    return "\n".join(line for line, gone in zip(lines, dropped, strict=True) if not gone)


_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.@+-]+){2,}[\\/]?")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)*\b")


@dataclass(frozen=True, slots=True)
class Signature:
    name: str  # as shown: the first line of the error, paths shortened
    key: str  # what recurs: the name without numbers and addresses


def signatures(text: str) -> list[Signature]:
    """The errors ``text`` reports, in order, each once."""
    found: dict[str, Signature] = {}
    for line in text.splitlines()[:_SCANNED_LINES]:
        signature = _signature(line.strip())
        if signature is not None:
            found.setdefault(signature.key, signature)
        if len(found) == MAX_ERRORS:
            break
    return list(found.values())


def _signature(line: str) -> Signature | None:
    if match := _RUST.search(line) or _TYPESCRIPT.search(line):
        return _named(f"error[{match.group(1)}]" if match.re is _RUST else match.group(1), match)
    if match := _EXCEPTION.search(line):
        return _named(match.group(1), match)
    if match := _ERRNO.search(line):
        return _named(match.group(1), match)
    if match := _NOT_FOUND.search(line) or _MISSING_MODULE.search(line):
        name = _short(match.group(0))
        return Signature(name, name)
    return None


def _named(label: str, match: re.Match) -> Signature:
    message = _short((match.group(2) or "").strip())
    name = f"{label}: {message}" if message else label
    name = name if len(name) <= MESSAGE_LIMIT else name[: MESSAGE_LIMIT - 1].rstrip() + "…"
    return Signature(name, _NUMBER.sub("N", _HEX.sub("0x", name)))


def _short(message: str) -> str:
    """A message with each path reduced to its last part: the folders differ between
    machines and temporary directories, the file name is what a reader needs."""
    return _PATH.sub(
        lambda m: os.path.basename(m.group(0).rstrip("/\\").replace("\\", "/")), message
    )


def missing_libraries(text: str) -> list[str]:
    """Libraries a failure says are not installed."""
    found = [python_package(m.group(1).split(".")[0]) for m in _PY_MISSING.finditer(text)]
    found += [n for m in _MISSING_MODULE.finditer(text) if (n := npm_package(m.group(1)))]
    return list(dict.fromkeys(found))


def frames(text: str) -> list[str]:
    """Paths of the stack frames a failure shows, innermost first."""
    python = [m.group(1) for m in _PY_FRAME.finditer(text)]
    if python:
        return python[::-1]  # a Python traceback lists the innermost frame last
    return [m.group(1) for m in _JS_FRAME.finditer(text)]
