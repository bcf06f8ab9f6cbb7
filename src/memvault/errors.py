"""Errors that cross layers: each one says what was wrong, in words a user can act on.

Each error class carries its ``kind`` (its name where it crosses a process) and its
``status`` (the HTTP status a REST answer to it carries). Each face turns errors into its
own outcome from one table: REST in ``api.responses``, MCP in ``mcp_server.answers``, the
CLI in ``cli.reach``.
"""

from __future__ import annotations

import errno
from typing import ClassVar


class MemvaultError(Exception):
    """Base class for errors memvault reports to its callers. ``kind`` names the error
    where it crosses a process (a vault write applied by another replica comes back as
    its kind, its message and its fields)."""

    kind: ClassVar[str] = "error"
    status: ClassVar[int | None] = None  # None: no client caused it; REST answers a 500
    fields: list[str]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            KINDS[cls.kind] = cls

    @classmethod
    def of_kind(cls, kind: str, message: str, fields: list[str] | None = None) -> MemvaultError:
        """The error a ``kind`` names (the base error for a kind unknown here)."""
        error_class = KINDS.get(kind, MemvaultError)
        if error_class is InvalidInput:
            return InvalidInput(message, fields=fields)
        try:
            return error_class(message)
        except TypeError:  # an error made of more than a message: the message is what is told
            return MemvaultError(message)


KINDS: dict[str, type[MemvaultError]] = {"error": MemvaultError}


class InvalidInput(MemvaultError):
    """Input was rejected; nothing was written."""

    kind = "invalid_input"
    status = 400

    def __init__(self, message: str, *, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields or []


class StoreFailure(MemvaultError):
    """The store could not write; nothing of the failed item was kept."""

    kind = "store_failure"
    status = 503  # nothing of the request was kept: the client may retry it as it is


class StoreUnavailable(StoreFailure):
    """The store cannot write for now: its disk is full, another process holds the
    database's lock, or the disk refuses writes. Nothing of the write was kept, and the
    same request succeeds once the cause is gone."""

    kind = "store_unavailable"


class VaultUnwritable(StoreFailure):
    """A vault folder could not be written (a full disk, a read-only folder): the file was
    not changed and nothing of it was indexed."""

    kind = "vault_unwritable"

    @classmethod
    def of(cls, folder: object, exc: OSError) -> VaultUnwritable:
        if exc.errno == errno.ENOSPC:
            cause = f"the disk holding {folder} is full"
        elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            cause = f"the folder {folder} cannot be written ({exc.strerror or exc})"
        else:
            cause = f"could not write in the folder {folder}: {exc.strerror or exc}"
        return cls(f"{cause}; nothing was written")
