"""Errors that cross layers: each one says what was wrong, in words a user can act on."""

from __future__ import annotations

import errno


class MemvaultError(Exception):
    """Base class for errors memvault reports to its callers."""


class InvalidInput(MemvaultError):
    """Input was rejected; nothing was written."""

    def __init__(self, message: str, *, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields or []


class StoreFailure(MemvaultError):
    """The store could not write; nothing of the failed item was kept."""


class StoreUnavailable(StoreFailure):
    """The store cannot write for now: its disk is full, another process holds the
    database's lock, or the disk refuses writes. Nothing of the write was kept, and the
    same request succeeds once the cause is gone."""


class VaultUnwritable(StoreFailure):
    """A vault folder could not be written (a full disk, a read-only folder): the file was
    not changed and nothing of it was indexed."""

    @classmethod
    def of(cls, folder: object, exc: OSError) -> VaultUnwritable:
        if exc.errno == errno.ENOSPC:
            cause = f"the disk holding {folder} is full"
        elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            cause = f"the folder {folder} cannot be written ({exc.strerror or exc})"
        else:
            cause = f"could not write in the folder {folder}: {exc.strerror or exc}"
        return cls(f"{cause}; nothing was written")
