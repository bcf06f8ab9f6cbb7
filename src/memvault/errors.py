"""Errors that cross layers: each one says what was wrong, in words a user can act on."""

from __future__ import annotations


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
