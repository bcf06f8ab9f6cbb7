"""Answers any route may give: an error, and a vault write handed to the vault's owner."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from memvault.api.schemas.board import BoardReport
from memvault.api.schemas.shape import Shape, sometimes


class Error(Shape):
    """Every error: what was wrong, in words a user can act on; nothing was written."""

    error: str
    fields: Annotated[list[str], sometimes("The fields at fault")]
    success: Annotated[Literal[False], sometimes("On the import routes, as agentmemory's")]
    report: Annotated[BoardReport, sometimes("A refused board operation's, on an MCP call")]


class VaultWriteAccepted(Shape):
    """A write of the vault a replica handed to the vault's owner, which did not apply it
    in time (none runs, or one is taking over): kept in the database, and the next owner
    applies it. Sending it again is not needed."""

    accepted: Literal[True]
    queued: Annotated[int, Field(description="The queued write's id")]
    message: str


# A route that writes the vault (board, fragments) may answer this on a replica that does
# not own the vault (PostgreSQL); on SQLite the server owns it and never does.
QUEUED = {
    202: {
        "description": "Handed to the vault's owner, which did not apply it in time; kept "
        "in the database and applied by the next owner",
        "model": VaultWriteAccepted,
    }
}
