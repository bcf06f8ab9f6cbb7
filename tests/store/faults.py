"""Real faults for tests: a database locked by another process, a small disk that fills up,
a folder on a read-only filesystem. Each undoes itself when the test ends, failed or not."""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Attempts at taking a disk's last byte while its server is still writing in the background.
FILL_ATTEMPTS = 20

_HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


@contextlib.contextmanager
def locked_by_another_process(database: Path) -> Iterator[None]:
    """Another process holds the database's write lock (``BEGIN EXCLUSIVE``) inside."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(database)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked", "the lock holder did not start"
        yield
    finally:
        with contextlib.suppress(BrokenPipeError):
            holder.stdin.write("\n")
            holder.stdin.flush()
        try:
            holder.wait(10)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait(10)


def _mount(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["mount", *args], capture_output=True, text=True)


@contextlib.contextmanager
def small_disk(where: Path, size: str = "8m") -> Iterator[Path]:
    """A real filesystem of ``size`` (a tmpfs) mounted at ``where``; skips the test where
    mounting is not possible (not root, no mount), unmounted after it whatever happened."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    where.mkdir(parents=True, exist_ok=True)
    mounted = _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where))
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        # Lazy: a process the test started may still hold a file open in it.
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path, database: Path | None = None) -> Path:
    """Take every free byte of ``disk`` with one file; delete the file to give them back.

    With ``database`` (a SQLite file in WAL mode on that disk), also the space its WAL
    already holds: after a checkpoint SQLite writes the WAL again from its start, in blocks
    the file already has, so a full disk does not stop a write that fits in them. The WAL
    is checkpointed and truncated to nothing first, and the disk filled while it stays
    empty (a background write of the server may slip in between: then the filler is
    given back and it is done again)."""
    for _ in range(FILL_ATTEMPTS):
        if database is not None:
            _truncate_wal(database)
        filler = _take_free_space(disk)
        wal = None if database is None else database.with_name(database.name + "-wal")
        if wal is None or not wal.exists() or wal.stat().st_blocks == 0:
            return filler
        filler.unlink()
    raise AssertionError(f"the WAL of {database} kept growing while the disk was filled")


def _truncate_wal(database: Path) -> None:
    with contextlib.closing(sqlite3.connect(database, timeout=30)) as conn:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0, f"could not checkpoint {database}: a reader or writer kept it busy"


def _take_free_space(disk: Path) -> Path:
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
    finally:
        os.close(fd)
    return filler


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` on a read-only bind mount of itself, so even root cannot write in it
    (root ignores a chmod); writable again after."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    bound = _mount("--bind", str(folder), str(folder))
    if bound.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {bound.stderr.strip()}")
    try:
        remounted = _mount("-o", "remount,bind,ro", str(folder))
        if remounted.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {remounted.stderr.strip()}")
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)
