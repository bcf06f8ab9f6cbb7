"""The ground the answer models stand on: closed and open shapes, counts, and a key
that is only sometimes in an answer."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

Count = Annotated[int, Field(ge=0)]
Score = float  # rounded to 6 places


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def sometimes(description: str | None = None) -> Any:
    """A key that is only sometimes in the answer (and never null when it is)."""
    return Field(default=None, description=description, json_schema_extra=_no_default)


class Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OpenShape(BaseModel):
    """An answer whose other keys depend on the operation (a board report's details)."""

    model_config = ConfigDict(extra="allow")
