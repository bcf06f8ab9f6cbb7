"""Private projects and paths: what the hook never sends, read by the hook itself.

A ``.memvaultignore`` in a project's folder, or in any folder above it up to the user's
home, says what stays private. An empty one (nothing but blank lines and ``#`` comments)
makes the whole project private: the hook sends nothing and injects nothing. Otherwise its
lines are gitignore globs (``.env``, ``secrets/**``, ``*.pem``, ``!public.pem``) of paths
whose tool inputs and outputs are never captured: the event is kept, with its content
replaced by ``MARKER``. ``MEMVAULT_CAPTURE=off`` in a host's environment makes its session
private the same way.

The hook says once per session on stderr that it records nothing (a marker file per
session in ``$MEMVAULT_HOME/private/sessions`` remembers it said so), and notes each
private project's folder in ``$MEMVAULT_HOME/private/projects``, which the server reads to
show private projects in ``status``, ``doctor`` and the viewer. Standard library only, no
server call; a parsed file is cached by its mtime and size for processes that ask often.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import time

TYPE_CHECKING = False  # typing is not imported at run time: the hook pays for every module
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

IGNORE_FILE = ".memvaultignore"
MARKER = "[REDACTED:memvaultignore]"
CAPTURE_VARIABLE = "MEMVAULT_CAPTURE"
STATE = "private"
SESSION_MARKERS_KEPT_SECONDS = 30 * 86400
# Fields of a private event that say what happened without saying what it held.
KEPT_FIELDS = frozenset(
    {
        "tool_name",
        "tool_use_id",
        "cwd",
        "hook_event_name",
        "model",
        "permission_mode",
        "transcript_path",
        "cursor_version",
        "duration",
        "duration_ms",
        "memory_read",
        "status",
    }
)
PATH_KEYS = ("file_path", "notebook_path", "path", "cwd")
# Words of a shell command that can name a file: split on space, quotes and redirections.
_WORDS = re.compile(r"""[^\s'"<>|;&()=]+""")
_cache: dict[str, tuple[int, int, Rules]] = {}


class Rules:
    """One ``.memvaultignore``: the folder it speaks for, and its patterns (none: the
    whole folder is private)."""

    __slots__ = ("file", "folder", "patterns")

    def __init__(self, file: str, lines: Iterable[str]) -> None:
        self.file = file
        self.folder = os.path.dirname(file)
        self.patterns = [p for p in (_pattern(line) for line in lines) if p is not None]

    @property
    def whole(self) -> bool:
        return not self.patterns

    def covers(self, path: str) -> bool:
        """Whether ``path`` (absolute, or relative to this file's folder) is private."""
        if self.whole:
            return _inside(path, self.folder)
        full = os.path.normpath(os.path.join(self.folder, path))
        if not _inside(full, self.folder):
            return False
        relative = os.path.relpath(full, self.folder).replace(os.sep, "/")
        private = False
        for regex, negated in self.patterns:
            if regex.match(relative):
                private = not negated
        return private


class Privacy:
    """What is private for one session in one folder: everything (``whole``, with the
    reason), or the paths the rules name."""

    __slots__ = ("cwd", "reason", "rules")

    def __init__(self, cwd: str, rules: list[Rules], reason: str = "") -> None:
        self.cwd = cwd
        self.rules = rules
        self.reason = reason

    @property
    def whole(self) -> bool:
        return bool(self.reason)

    def covers(self, path: str) -> bool:
        if not path:
            return False
        full = os.path.normpath(os.path.join(self.cwd, os.path.expanduser(path)))
        return any(rules.covers(full) for rules in self.rules)

    def scrub(self, data: dict) -> bool:
        """Replace the content of ``data`` by ``MARKER`` when its tool touches a private
        path; True when it did."""
        if not self.rules or not any(self.covers(p) for p in named_paths(data)):
            return False
        for key in list(data):
            if key not in KEPT_FIELDS:
                data[key] = MARKER
        data["private"] = IGNORE_FILE
        return True


def read(cwd: str, environ: Mapping[str, str]) -> Privacy:
    """What is private for a session in ``cwd``: ``MEMVAULT_CAPTURE=off``, else every
    ``.memvaultignore`` from ``cwd`` up to the user's home (or the root, outside it)."""
    if environ.get(CAPTURE_VARIABLE, "").strip().lower() in ("off", "0", "false", "no"):
        return Privacy(cwd, [], f"{CAPTURE_VARIABLE}=off")
    found = ignore_files(cwd, environ)
    for rules in found:
        if rules.whole:
            return Privacy(cwd, found, f"{rules.file} makes the project private")
    return Privacy(cwd, found)


def ignore_files(cwd: str, environ: Mapping[str, str] | None = None) -> list[Rules]:
    """The ``.memvaultignore`` files that speak for ``cwd``, nearest first."""
    if not cwd or not os.path.isabs(cwd):
        return []
    stop = _user_home(environ)
    folder = os.path.normpath(cwd)
    found: list[Rules] = []
    while True:
        rules = load(os.path.join(folder, IGNORE_FILE))
        if rules is not None:
            found.append(rules)
        parent = os.path.dirname(folder)
        if folder == stop or parent == folder:
            return found
        folder = parent


def load(file: str) -> Rules | None:
    """The file's rules, None when there is no such file; a file that cannot be read
    makes its folder private (as an empty one does)."""
    try:
        status = os.stat(file)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    cached = _cache.get(file)
    if cached is not None and cached[:2] == (status.st_mtime_ns, status.st_size):
        return cached[2]
    try:
        with open(file, encoding="utf-8", errors="replace") as opened:
            rules = Rules(file, opened.read().splitlines())
    except OSError:
        # There but unreadable: what it says is unknown, so everything it could say holds.
        return Rules(file, [])
    _cache[file] = (status.st_mtime_ns, status.st_size, rules)
    return rules


def named_paths(data: Mapping[str, object]) -> list[str]:
    """The paths a tool call names: its input's file and folder fields, an edit list's
    files, the words of a shell command, and the fields a host puts at the top."""
    found: list[str] = []
    sources: list[object] = [data, data.get("tool_input")]
    edits = data.get("edits")
    given = data.get("tool_input")
    if isinstance(given, dict):
        edits = given.get("edits", edits)
        command = given.get("command")
        if isinstance(command, str):
            found += _WORDS.findall(command)
    if isinstance(edits, list):
        sources += edits
    for source in sources:
        if isinstance(source, dict):
            found += [v.strip() for k in PATH_KEYS if isinstance(v := source.get(k), str)]
    return [p for p in found if p]


def say_once(home: str, host: str, session_id: str, privacy: Privacy) -> bool:
    """Note that this session records nothing; True the first time (say so on stderr)."""
    folder = os.path.join(home, STATE, "sessions")
    name = hashlib.sha256(f"{host}\0{session_id}".encode("utf-8", "replace")).hexdigest()[:32]
    try:
        os.makedirs(folder, exist_ok=True)
        descriptor = os.open(os.path.join(folder, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    except OSError:
        return True  # no state folder: saying it again beats never saying it
    os.close(descriptor)
    _forget_old_sessions(folder)
    for rules in privacy.rules:
        if rules.whole:
            note_project(home, rules.folder)
    return True


def note_project(home: str, folder: str) -> None:
    """Record ``folder`` as a private project, for ``status`` and the viewer to show."""
    notes = os.path.join(home, STATE, "projects")
    with contextlib.suppress(OSError):
        os.makedirs(notes, exist_ok=True)
        path = os.path.join(notes, _project_key(folder) + ".json")
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as note:
                json.dump({"folder": folder, "since": time.strftime("%Y-%m-%d")}, note)


def forget_project(home: str, folder: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(home, STATE, "projects", _project_key(folder) + ".json"))


def private_projects(home: str) -> list[str]:
    """The folders recorded as private projects that still are: their ignore file is
    there and makes the whole folder private."""
    notes = os.path.join(home, STATE, "projects")
    try:
        names = sorted(os.listdir(notes))
    except OSError:
        return []
    folders = []
    for name in names:
        try:
            with open(os.path.join(notes, name), encoding="utf-8") as note:
                folder = json.load(note).get("folder")
        except (OSError, ValueError, AttributeError):
            continue
        rules = load(os.path.join(folder, IGNORE_FILE)) if isinstance(folder, str) else None
        if rules is not None and rules.whole:
            folders.append(folder)
    return sorted(set(folders))


def _pattern(line: str) -> tuple[re.Pattern[str], bool] | None:
    """A gitignore line as a regex over a path relative to the file's folder, and whether
    it is a negation; None for a blank line or a comment."""
    text = line.rstrip("\n\r")
    if not text.strip() or text.startswith("#"):
        return None
    text = text.strip()
    negated = text.startswith("!")
    if negated:
        text = text[1:]
    text = text.removeprefix("\\")
    directory = text.endswith("/")
    text = text.strip("/") if directory else text
    if not text:
        return None
    anchored = "/" in text.lstrip("/") or text.startswith("/")
    body = _glob(text.lstrip("/"))
    prefix = "" if anchored else "(?:.*/)?"
    # A match names the path itself or a folder holding it.
    suffix = "/.*" if directory else "(?:/.*)?"
    return re.compile(f"^{prefix}{body}{suffix}$", re.DOTALL), negated


def _glob(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif text.startswith("/**", i) and i + 3 == len(text):
            out.append("/.*")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append("[^/]*")
            i += 1
        elif text[i] == "?":
            out.append("[^/]")
            i += 1
        elif text[i] == "[" and "]" in text[i + 1 :]:
            end = text.index("]", i + 1)
            inner = text[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + inner[1:] if inner.startswith("!") else inner) + "]")
            i = end + 1
        else:
            out.append(re.escape(text[i]))
            i += 1
    return "".join(out)


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.normpath(path), os.path.normpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _user_home(environ: Mapping[str, str] | None) -> str:
    home = (environ or os.environ).get("HOME") or os.path.expanduser("~")
    return os.path.normpath(home)


def _project_key(folder: str) -> str:
    return hashlib.sha256(os.path.normpath(folder).encode("utf-8", "replace")).hexdigest()[:32]


def _forget_old_sessions(folder: str) -> None:
    """Drop the markers of sessions not seen for a month: they only keep stderr quiet."""
    cutoff = time.time() - SESSION_MARKERS_KEPT_SECONDS
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
