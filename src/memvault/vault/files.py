"""File primitives for the vault: one lock for the memory folder, atomic replace, reads."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

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
