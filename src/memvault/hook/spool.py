"""The spool: events a hook could not deliver, kept on disk until the server takes them in.

One file per event, each holding one envelope as JSON. Why files, one each:

- Writers never coordinate. Hooks run as many short processes at once; each file gets a
  name no other writer can produce (time, process id, random bytes), is written under a
  hidden temporary name, flushed to disk, then renamed into place. A rename within a folder
  is atomic, so a reader sees a whole event or none, and a writer that dies leaves at most a
  temporary file behind, never half an event in someone else's file. An append-only file
  shared by all writers would need a lock, and a crash mid-append would corrupt the records
  after it.
- Names start with the time in nanoseconds, so sorted names replay events in about the
  order they happened.
- Deleting a file is the only acknowledgment. A drain that dies midway delivers some events
  again, and their event ids make that a no-op on the server.

The server's side (``memvault.ingest.spool``) reads, stores and deletes; this module owns
the format and is the only code that writes it.
"""

from __future__ import annotations

import os
import time

SUFFIX = ".json"
TEMPORARY = ".tmp"
BAD = "bad"


def put(folder: str, body: bytes) -> str:
    """Write one encoded envelope to the spool, durably; returns the file's name."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}{SUFFIX}"
    temporary = os.path.join(folder, f".{name}{TEMPORARY}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    descriptor = os.open(temporary, flags, 0o600)
    try:
        view = memoryview(body)
        while view:
            view = view[os.write(descriptor, view) :]
        os.fsync(descriptor)
    except BaseException:
        os.close(descriptor)
        os.unlink(temporary)
        raise
    os.close(descriptor)
    os.replace(temporary, os.path.join(folder, name))
    _sync_folder(folder)
    return name


def pending(folder: str, limit: int | None = None) -> list[str]:
    """Names of the complete spooled events, oldest first (at most ``limit``)."""
    try:
        with os.scandir(folder) as entries:
            names = [
                e.name for e in entries if e.name.endswith(SUFFIX) and not e.name.startswith(".")
            ]
    except FileNotFoundError:
        return []
    names.sort()
    return names if limit is None else names[:limit]


def abandoned(folder: str, older_than: float) -> list[str]:
    """Temporary files older than ``older_than`` seconds: left by writers that died."""
    cutoff = time.time() - older_than
    found = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not (entry.name.startswith(".") and entry.name.endswith(TEMPORARY)):
                    continue
                try:
                    if entry.stat().st_mtime < cutoff:
                        found.append(entry.name)
                except FileNotFoundError:  # renamed into place meanwhile
                    continue
    except FileNotFoundError:
        return []
    return sorted(found)


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable; Windows cannot open a folder for this, nor needs to."""
    if os.name == "nt":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
