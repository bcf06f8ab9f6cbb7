"""Editing a user's config files safely: merge, back up once, write atomically, restore.

An installer describes each file it touches as an :class:`Artifact`: how to put memvault's
part into the file and how to take it out again. :func:`install` and :func:`uninstall`
do the rest. Every artifact is computed before anything is written, so one malformed file
means no file changes. The first time memvault changes a file, its original bytes (or its
absence) are kept under ``$MEMVAULT_HOME/install/``; uninstalling puts them back byte for
byte when the file still holds exactly what memvault wrote, and otherwise removes only
memvault's part, keeping the user's later edits.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memvault.errors import MemvaultError

BEGIN = "<!-- memvault:begin -->"
END = "<!-- memvault:end -->"


class ConfigError(MemvaultError):
    """A config file memvault was asked to edit cannot be read safely; nothing was written."""


# --- JSON documents ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JsonStyle:
    """How a JSON file is laid out, so it is written back the way the user keeps it."""

    indent: str | None = "  "  # None: everything on one line
    newline: str = "\n"
    final_newline: bool = True

    @classmethod
    def of(cls, text: str) -> JsonStyle:
        newline = "\r\n" if "\r\n" in text else "\n"
        body = text.strip()
        if "\n" not in body:
            return cls(None, newline, text.endswith("\n")) if body else cls()
        indents = re.findall(r"^([ \t]+)\S", body, flags=re.MULTILINE)
        if not indents:
            indent = ""  # one key per line, flush left
        elif indents[0].startswith("\t"):
            indent = "\t"
        else:
            indent = " " * min(len(i) for i in indents if i.startswith(" "))
        return cls(indent, newline, text.endswith("\n"))

    def dump(self, document: Any) -> bytes:
        text = json.dumps(document, indent=self.indent, ensure_ascii=False)
        if self.newline != "\n":
            text = text.replace("\n", self.newline)
        if self.final_newline:
            text += self.newline
        return text.encode("utf-8")


def load_json(path: Path, data: bytes | None) -> tuple[dict[str, Any], JsonStyle]:
    """The JSON object in ``data`` (empty when the file is missing or blank) and its style."""
    if data is None:
        return {}, JsonStyle()
    text = _decode(path, data)
    if not text.strip():
        return {}, JsonStyle()
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}. "
            "Nothing was changed; fix the file (memvault cannot keep // comments) and run "
            "the command again."
        ) from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path} does not hold a JSON object. Nothing was changed.")
    if not document:  # `{}`: no layout of the user's to follow
        return document, JsonStyle(newline="\r\n" if "\r\n" in text else "\n")
    return document, JsonStyle.of(text)


def expect(path: Path, value: Any, kind: type, where: str) -> Any:
    """``value`` when it is a ``kind``; otherwise a ConfigError naming the file and key."""
    if not isinstance(value, kind):
        expected = {dict: "an object", list: "an array"}.get(kind, kind.__name__)
        raise ConfigError(f"{path}: {where} should be {expected}. Nothing was changed.")
    return value


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text (byte {exc.start}). Nothing was changed."
        ) from None


# --- Delimited blocks in text files --------------------------------------------------------


def put_block(path: Path, data: bytes | None, body: str) -> bytes:
    """``data`` with memvault's block set to ``body``: replaced in place, or appended."""
    text = _decode(path, data) if data is not None else ""
    newline = "\r\n" if "\r\n" in text else "\n"
    block = newline.join([BEGIN, *body.strip("\n").split("\n"), END])
    span = _block_span(path, text)
    if span is not None:
        start, end = span
        return (text[:start] + block + text[end:]).encode("utf-8")
    if text and not text.endswith(newline * 2):
        text += newline if text.endswith(newline) else newline * 2
    return (text + block + newline).encode("utf-8")


def drop_block(path: Path, data: bytes) -> str:
    """The text of ``data`` without memvault's block and the blank line set before it."""
    text = _decode(path, data)
    span = _block_span(path, text)
    if span is None:
        return text
    newline = "\r\n" if "\r\n" in text else "\n"
    start, end = span
    before, after = text[:start], text[end:]
    if after.startswith(newline):
        after = after[len(newline) :]
    if not after.strip():
        before = before.rstrip("\r\n")
        return before + newline if before else ""
    if after.startswith(newline) and (not before or before.endswith(newline * 2)):
        after = after[len(newline) :]  # one blank line where the block was, not two
    return before + after


def _block_span(path: Path, text: str) -> tuple[int, int] | None:
    start = text.find(BEGIN)
    if start < 0:
        if END in text:
            raise ConfigError(f"{path} has `{END}` without `{BEGIN}`. Nothing was changed.")
        return None
    end = text.find(END, start)
    if end < 0:
        line = text.count("\n", 0, start) + 1
        raise ConfigError(
            f"{path} has `{BEGIN}` on line {line} but no `{END}` after it. Nothing was changed; "
            "restore the closing marker or delete the block by hand."
        )
    return start, end + len(END)


# --- Artifacts and what became of them ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stripped:
    """A file with memvault's part taken out; ``empty`` when nothing of the user's is left."""

    data: bytes
    empty: bool


@dataclass(frozen=True, slots=True)
class Artifact:
    """One file an installer manages, and how memvault's part goes in and comes out."""

    path: Path
    role: str  # what memvault keeps there: "hooks", "MCP server", "agent rules"
    put: Callable[[bytes | None], bytes]
    take: Callable[[bytes], Stripped]
    # A file that can hold a secret (an MCP server's or a hook's env, the host's own tokens)
    # is created readable by its owner alone; one that exists keeps its mode.
    private: bool = False


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened (or, in a dry run, would happen) to one file."""

    path: Path
    role: str
    action: str  # created | updated | unchanged | restored | removed | stripped | absent
    detail: str = ""
    diff: str = ""  # in a dry run: the change as a unified diff

    def to_dict(self) -> dict[str, str]:
        found = {**asdict(self), "path": str(self.path)}
        if not self.diff:  # only a dry run shows one
            del found["diff"]
        return found


def unified_diff(path: Path, before: bytes | None, after: bytes | None) -> str:
    """What changes in ``path``, as ``diff -u`` shows it (``/dev/null`` for no file)."""
    old = (before or b"").decode("utf-8", errors="replace").splitlines(keepends=True)
    new = (after or b"").decode("utf-8", errors="replace").splitlines(keepends=True)
    lines = difflib.unified_diff(
        old,
        new,
        fromfile=str(path) if before is not None else "/dev/null",
        tofile=str(path) if after is not None else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


# --- Backups ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Backup:
    """What a file was before memvault first changed it, and what memvault last wrote."""

    path: str
    existed: bool
    mode: int | None
    original: bytes | None
    installed_sha256: str | None  # None: edited by someone else since; restore would lose it
    created_dirs: list[str]


class Backups:
    """Per file under ``folder``: a ``<key>.json`` record and the original bytes, ``<key>.orig``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _key(self, path: Path) -> str:
        return hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:24]

    def get(self, path: Path) -> Backup | None:
        record = self.folder / f"{self._key(path)}.json"
        try:
            fields = json.loads(record.read_text("utf-8"))
            existed = fields["existed"]
            original = (self.folder / f"{self._key(path)}.orig").read_bytes() if existed else None
        except FileNotFoundError as exc:
            if exc.filename == str(record):
                return None
            raise ConfigError(f"the original of {path} is missing from {self.folder}") from None
        except (OSError, ValueError, KeyError) as exc:
            raise ConfigError(f"cannot read the install record {record}: {exc}") from None
        return Backup(
            path=fields["path"],
            existed=existed,
            mode=fields.get("mode"),
            original=original,
            installed_sha256=fields.get("installedSha256"),
            created_dirs=list(fields.get("createdDirs", [])),
        )

    def put(self, path: Path, backup: Backup) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        if backup.original is not None:  # the original bytes, as a file a person can open
            write_atomically(self.folder / f"{self._key(path)}.orig", backup.original, 0o600)
        fields = {
            "path": backup.path,
            "existed": backup.existed,
            "mode": backup.mode,
            "installedSha256": backup.installed_sha256,
            "createdDirs": backup.created_dirs,
        }
        text = json.dumps(fields, indent=2, ensure_ascii=False) + "\n"
        write_atomically(self.folder / f"{self._key(path)}.json", text.encode("utf-8"), 0o600)

    def forget(self, path: Path) -> None:
        for suffix in (".json", ".orig"):
            (self.folder / f"{self._key(path)}{suffix}").unlink(missing_ok=True)


def sha256(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


# --- Install and uninstall -------------------------------------------------------------------


def install(artifacts: list[Artifact], backups: Backups, *, dry_run: bool) -> list[Outcome]:
    """Put memvault's part into every artifact; unchanged files are not touched."""
    planned = []
    for artifact in artifacts:
        target = _real(artifact.path)
        current = _read(target)
        planned.append((artifact, target, current, artifact.put(current)))
    outcomes = []
    for artifact, target, current, new in planned:
        if new == current:
            outcomes.append(Outcome(artifact.path, artifact.role, "unchanged"))
            continue
        action = "created" if current is None else "updated"
        if not dry_run:
            _write_keeping_backup(target, current, new, backups, private=artifact.private)
        diff = unified_diff(artifact.path, current, new) if dry_run else ""
        outcomes.append(Outcome(artifact.path, artifact.role, action, diff=diff))
    return outcomes


def uninstall(artifacts: list[Artifact], backups: Backups, *, dry_run: bool) -> list[Outcome]:
    """Take memvault's part out of every artifact, restoring originals where possible."""
    planned = []
    for artifact in artifacts:
        target = _real(artifact.path)
        current = _read(target)
        backup = backups.get(target)
        restorable = (
            backup is not None
            and current is not None
            and backup.installed_sha256 is not None
            and backup.installed_sha256 == sha256(current)
        )
        stripped = artifact.take(current) if current is not None and not restorable else None
        planned.append((artifact, target, current, backup, stripped))
    outcomes, created_dirs = [], set()
    for artifact, target, current, backup, stripped in planned:
        outcome = _undo(artifact, target, current, backup, stripped, dry_run=dry_run)
        if not dry_run and backup is not None:
            backups.forget(target)
            created_dirs.update(backup.created_dirs)
        outcomes.append(outcome)
    # Folders memvault made go once every file in them is gone, deepest first.
    for folder in sorted(created_dirs, key=lambda d: len(Path(d).parts), reverse=True):
        with contextlib.suppress(OSError):  # not empty: someone else's files are in it
            Path(folder).rmdir()
    return outcomes


def _undo(
    artifact: Artifact,
    target: Path,
    current: bytes | None,
    backup: Backup | None,
    stripped: Stripped | None,
    *,
    dry_run: bool,
) -> Outcome:
    path, role = artifact.path, artifact.role
    if current is None:
        return Outcome(path, role, "absent", "not there; nothing to do")

    def diff(after: bytes | None) -> str:
        return unified_diff(path, current, after) if dry_run else ""

    if stripped is None:  # still exactly what memvault wrote
        assert backup is not None
        if not dry_run:
            if backup.existed:
                write_atomically(target, backup.original or b"", backup.mode)
            else:
                target.unlink()
        if backup.existed:
            return Outcome(
                path,
                role,
                "restored",
                "put back as it was before install",
                diff(backup.original or b""),
            )
        return Outcome(path, role, "removed", "memvault created it; deleted", diff(None))
    if stripped.data == current:
        return Outcome(path, role, "unchanged", "nothing of memvault's in it")
    why = (
        "changed since install, so it was not restored: removed memvault's entries, kept the rest"
        if backup is not None
        else "no install record: removed memvault's entries, kept the rest"
    )
    if stripped.empty and backup is not None and not backup.existed:
        if not dry_run:
            target.unlink()
        detail = "memvault created it and nothing else is in it"
        return Outcome(path, role, "removed", detail, diff(None))
    if not dry_run:
        write_atomically(target, stripped.data, _mode(target))
    return Outcome(path, role, "stripped", why, diff(stripped.data))


def _write_keeping_backup(
    target: Path, current: bytes | None, new: bytes, backups: Backups, *, private: bool = False
) -> None:
    backup = backups.get(target)
    if backup is None:
        backup = Backup(
            path=str(target),
            existed=current is not None,
            mode=_mode(target) if current is not None else None,
            original=current,
            installed_sha256=sha256(new),
            created_dirs=[str(d) for d in _missing_dirs(target.parent)],
        )
    elif backup.installed_sha256 is not None and backup.installed_sha256 == sha256(current):
        backup.installed_sha256 = sha256(new)  # still nothing but memvault's own writes
    else:
        backup.installed_sha256 = None  # someone edited it since; a restore would lose that
    backups.put(target, backup)
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode(target) if current is not None else (0o600 if private else None)
    write_atomically(target, new, mode)


def write_atomically(path: Path, data: bytes, mode: int | None) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode if mode is not None else _default_mode())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _real(path: Path) -> Path:
    # A symlinked config (a dotfiles repository, say) is edited where it points.
    return path.resolve() if path.is_symlink() else path


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ConfigError(f"{path} is a folder, not a file. Nothing was changed.") from None


def _mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return None


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _missing_dirs(folder: Path) -> list[Path]:
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    return missing  # deepest first
