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

- Only a regular file is ever opened as an event. Anything else with an event's name (a
  FIFO, whose opening would wait for a writer forever; a device; a link), a file over the
  server's body limit and a file that cannot be read is for the reader to set aside, in
  ``bad/`` beside the events, so the events behind it are delivered.

The server's side (``memvault.ingest.spool``) reads, stores and deletes; this module owns
the format, is the only code that writes it and says what may be read as an event.
"""

from __future__ import annotations

import os
import stat
import time

SUFFIX = ".json"
TEMPORARY = ".tmp"
BAD = "bad"
# The server's default limit on a request's body (``MEMVAULT_MAX_BODY_BYTES`` sets it): an
# event larger than this is refused by ``/observe``, so it is not worth keeping either.
MAX_BODY_BYTES = 1024 * 1024
# Never wait for a FIFO's writer, never follow a link (Windows has neither flag, nor FIFOs).
_NO_WAIT = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS = os.O_RDONLY | _NO_WAIT | getattr(os, "O_BINARY", 0)


class Unfit(Exception):
    """A file in the spool that cannot be an event: not a regular file, over the size
    limit, or unreadable. The message says which."""


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


def set_aside(folder: str) -> list[str]:
    """Names of the files the server set aside in ``folder``'s ``bad/`` (their events were
    not stored), oldest first."""
    try:
        return sorted(os.listdir(os.path.join(folder, BAD)))
    except (FileNotFoundError, NotADirectoryError):
        return []


def read(folder: str, name: str, limit: int = MAX_BODY_BYTES) -> bytes:
    """The content of the spooled event ``name``, at most ``limit`` bytes.

    Raises ``FileNotFoundError`` when the file is gone (another reader took it) and
    ``Unfit`` when it cannot be an event. Nothing but a regular file is opened, and that
    without blocking or following a link, so a FIFO or a device put in the spool never
    holds the reader up."""
    path = os.path.join(folder, name)
    try:
        found = os.lstat(path)
        _check(found, limit)
        descriptor = os.open(path, _READ_FLAGS)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise Unfit(f"could not be read: {exc.strerror or exc}") from None
    try:
        _check(os.fstat(descriptor), limit)  # the same file that was looked at, still
        chunks = []
        left = limit + 1
        while left > 0 and (chunk := os.read(descriptor, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise Unfit(f"could not be read: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)
    content = b"".join(chunks)
    if len(content) > limit:
        raise Unfit(f"is over the {limit}-byte limit of an event")
    return content


def _check(found: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(found.st_mode):
        raise Unfit(f"is not a regular file but {_kind(found.st_mode)}")
    if found.st_size > limit:
        raise Unfit(f"is {found.st_size} bytes, over the {limit}-byte limit of an event")


def _kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return kind
    return "not a file"


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
