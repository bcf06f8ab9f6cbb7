"""A file other writers change without taking memvault's lock: ``memory/index.md``.

People append to the board by hand (``echo "| … |" >> index.md``), and other tools write it
without knowing about memvault's lock. Replacing such a file with a renamed temporary
copy loses whatever another writer added between the last read and the rename: their
bytes went to the file that the rename just unlinked. So:

- the file is read through a handle that stays open for the whole change;
- a change that only adds lines at the end is an append (``O_APPEND``), never a rewrite,
  so it cannot overwrite anyone's bytes;
- a rewrite still goes through a temporary file and a rename (readers never see half a
  file), and afterwards whatever grew in the replaced file, read through the handle still
  open on it, is appended to the new one.

Editors (Obsidian among them) save a file in place: they truncate it and write it whole.
What such a save leaves is not lines added at the end, and is never taken for them. A
rewrite is refused when the file no longer holds exactly what was read, and when the
replaced file was saved over in place meanwhile, that version is put back: either way the
caller reads the file again and makes its change on what the person saved.

The one window left is a writer that opened the old file before the rename and writes to
it after the last look at it; the last look waits a few milliseconds for such a writer.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import BinaryIO

from memvault.vault.files import write_atomic

SETTLE_SECONDS = 0.005  # how long the last look at a replaced file waits for late appends
SETTLE_LOOKS = 40  # looks at a file being saved in place, at most, before taking it as it is
RECENT_SECONDS = 0.05  # a file written this recently may be in the middle of a save


class NotText(ValueError):
    """The file holds bytes that are not UTF-8."""

    def __init__(self, path: Path, raw: bytes, error: UnicodeDecodeError) -> None:
        line = raw.count(b"\n", 0, error.start) + 1
        super().__init__(
            f"{path.name} is not UTF-8 text: byte {error.start} (line {line}) is "
            f"0x{raw[error.start]:02x}; save the file as UTF-8"
        )
        self.line = line


def decode(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotText(path, raw, exc) from None


class SharedFile:
    """One change of a shared file: ``with SharedFile(path) as f: f.text … f.replace(new)``.

    ``text`` is the file as it was when opened ("" if it did not exist); ``grown`` is what
    other writers appended since, as carried over into the file memvault wrote."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.raw = self.grown = b""
        try:
            self._handle: BinaryIO | None = self.path.open("rb")
        except FileNotFoundError:
            self._handle = None
        else:
            self.raw = self._settled(self._handle.read())
        try:
            self.text = decode(self.path, self.raw)
        except NotText:
            self.close()
            raise

    def __enter__(self) -> SharedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()

    @property
    def exists(self) -> bool:
        return self._handle is not None

    def unchanged(self) -> bool:
        """Nobody has changed the file since it was read: the same file, holding the same
        bytes (an editor's save in place may keep the size)."""
        if self._handle is None:
            return not self.path.exists()
        try:
            now = os.fstat(self._handle.fileno())
            same_file = os.stat(self.path).st_ino == now.st_ino
        except FileNotFoundError:
            return False
        # The size first: most changes show there, and it costs no read.
        return same_file and now.st_size == len(self.raw) and self._replaced_bytes() == self.raw

    def append(self, text: str) -> bool:
        """Add ``text`` at the end, after whatever is there by then. False (nothing
        written) when the file changed since it was read: the caller reads it again."""
        if not self.unchanged():
            return False
        self._append_bytes(text.encode("utf-8"))
        return True

    def replace(self, text: str) -> bool:
        """Replace the file with ``text``, then carry over what other writers appended to
        the replaced file meanwhile. False when the file was saved over (not appended to)
        since it was read, before the rename (nothing written) or just after it (the
        version saved is put back): the caller reads it again."""
        if self._handle is not None and not self.unchanged():
            return False
        write_atomic(self.path, text)
        if self._handle is None:
            return True
        settled = False
        while True:
            now = self._replaced_bytes()
            if not now.startswith(self.raw):
                _put_back(self.path, self._settled(now))
                return False
            extra = now[len(self.raw) + len(self.grown) :]
            if extra:
                self.grown += extra
                self._append_bytes(extra)
                settled = False
            elif settled:
                return True
            else:
                time.sleep(SETTLE_SECONDS)
                settled = True

    def _settled(self, now: bytes) -> bytes:
        """The file once a save in place is done with it. An editor truncates the file,
        then writes it whole, so what a look in the middle finds is empty or stops short
        of a line's end; a whole board ends with one (memvault's writes always do). Such
        a look at a file written within ``RECENT_SECONDS`` is made again until two looks
        agree on a file that is not empty (a bounded wait: then it is taken as it is)."""
        assert self._handle is not None
        for _ in range(SETTLE_LOOKS):
            if now.endswith(b"\n"):
                return now
            if time.time() - os.fstat(self._handle.fileno()).st_mtime > RECENT_SECONDS:
                return now  # nobody has written it since just before ``now`` was read
            time.sleep(SETTLE_SECONDS)
            again = self._replaced_bytes()
            if again == now and now:
                return now
            now = again
        return now

    def _replaced_bytes(self) -> bytes:
        """The whole of the file that was read, as it is now (renamed over or not)."""
        assert self._handle is not None
        self._handle.seek(0)
        return self._handle.read()

    def _append_bytes(self, data: bytes) -> None:
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _put_back(path: Path, raw: bytes) -> None:
    """A version another writer saved into the file just replaced, in place again."""
    try:
        write_atomic(path, raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise NotText(path, raw, exc) from None
