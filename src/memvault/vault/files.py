"""File primitives for the vault: one lock for the memory folder, atomic replace, reads,
the check that a name stays inside its folder, and the one that a symbolic link does not
lead out of the vault."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from pathlib import Path, PurePath

from filelock import FileLock

LOCK_NAME = ".memvault.lock"  # hidden: Obsidian does not index dot files


def memory_lock(memory_dir: Path, timeout: float = 30.0) -> FileLock:
    """The lock every memvault process takes before changing anything under ``memory/``."""
    memory_dir.mkdir(parents=True, exist_ok=True)
    return FileLock(memory_dir / LOCK_NAME, timeout=timeout)


def read_text(path: Path) -> str | None:
    """The file's text exactly as stored (line endings kept), or None if it does not exist."""
    try:
        with path.open("r", encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` all at once: readers see the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


class OutsideFolder(ValueError):
    """A name that becomes a path (an id, a key, an archive record's path) would lead
    outside the folder it belongs to."""


def inside(folder: Path, relative: str | PurePath) -> Path:
    """``folder / relative``, when it names something inside ``folder``; ``OutsideFolder``
    naming ``relative`` otherwise.

    The check is on the resolved path, so ``..`` parts, an absolute path and a symbolic
    link that leads elsewhere are all caught, whether or not the file exists yet. The path
    returned keeps ``folder`` as it was given (callers take paths relative to it)."""
    name = str(relative)
    if not name or "\x00" in name:
        raise OutsideFolder(f"{name!r} is not a file name: it is empty or holds a NUL character")
    parts = PurePath(relative).parts
    if PurePath(relative).is_absolute() or ".." in parts:
        raise OutsideFolder(f"{name!r} leads outside {folder.name}/")
    target = folder.joinpath(*parts)
    root = folder.resolve()
    resolved = target.resolve()
    if resolved == root or not resolved.is_relative_to(root):
        raise OutsideFolder(f"{name!r} leads outside {folder.name}/")
    return target


log = logging.getLogger("memvault.vault")
_TOLD: set[tuple[str, str]] = set()  # links already named in the log, said once each


def leads_out(vault: Path, path: Path) -> Path | None:
    """Where ``path`` really is when a symbolic link on its way leads out of ``vault``;
    ``None`` when it stays inside (a link within the vault is followed as any path is)."""
    try:
        resolved = path.resolve()
        root = vault.resolve()
    except (OSError, RuntimeError):  # a loop of links leads nowhere readable
        return path
    return None if resolved.is_relative_to(root) else resolved


def refused_link(vault: Path, path: Path, what: str) -> bool:
    """Whether ``path`` leads out of ``vault`` through a link, in which case it is neither
    read nor written; the first refusal of each link is logged, naming ``what`` it was."""
    target = leads_out(vault, path)
    if target is None:
        return False
    told = (str(path), str(target))
    if told not in _TOLD:
        _TOLD.add(told)
        log.warning(
            "%s %s is a symbolic link leading out of the vault (to %s): not read or written",
            what,
            path,
            target,
        )
    return True


def links_out(vault: Path, folders: list[Path]) -> list[tuple[Path, Path]]:
    """Every symbolic link under ``folders`` that leads out of ``vault``, with its target
    (links are not walked into)."""
    found = []
    for folder in folders:
        if folder.is_symlink() and (target := leads_out(vault, folder)) is not None:
            found.append((folder, target))
            continue
        for parent, dirs, files in os.walk(folder):
            for name in sorted(dirs + files):
                path = Path(parent, name)
                if path.is_symlink() and (target := leads_out(vault, path)) is not None:
                    found.append((path, target))
    return found


def file_sha256(path: Path) -> str | None:
    """A file's SHA-256, or None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
