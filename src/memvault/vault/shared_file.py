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
            self.raw = self._handle.read()
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
        """Nobody has added to the file since it was read."""
        if self._handle is None:
            return not self.path.exists()
        try:
            same_file = os.stat(self.path).st_ino == os.fstat(self._handle.fileno()).st_ino
        except FileNotFoundError:
            return False
        return same_file and os.fstat(self._handle.fileno()).st_size == len(self.raw)

    def append(self, text: str) -> bool:
        """Add ``text`` at the end, after whatever is there by then. False (nothing
        written) when the file changed since it was read: the caller reads it again."""
        if not self.unchanged():
            return False
        self._append_bytes(text.encode("utf-8"))
        return True

    def replace(self, text: str) -> None:
        """Replace the file with ``text``, then carry over what other writers appended to
        the replaced file meanwhile."""
        write_atomic(self.path, text)
        if self._handle is None:
            return
        settled = False
        while True:
            extra = self._handle.read()
            if extra:
                self.grown += extra
                self._append_bytes(extra)
                settled = False
            elif settled:
                return
            else:
                time.sleep(SETTLE_SECONDS)
                settled = True

    def _append_bytes(self, data: bytes) -> None:
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
