"""The observe envelope: what hooks send, validated with errors that name the field."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)
from pydantic_core import PydanticCustomError

from memvault import jsontext
from memvault.errors import InvalidInput

NUL_REFUSED = "holds a NUL character (U+0000), which memvault does not store"


_Required = Annotated[str, StringConstraints(min_length=1)]

# Host events that say something about a session but carry none of its work: a session
# starting or ending (``claude mcp list`` sends a SessionEnd and nothing else), a
# notification, compaction, memvault's own record of a memory block. Such an event is
# stored like any other, and gives its session no board row: a row is for work. (A
# host's ``/session/start`` registers the row the agent is told about; that is a request
# for one, not an event.)
NO_WORK_HOOKS = frozenset(
    {
        "session_start",
        "session_end",
        "notification",
        "pre_compact",
        "post_compact",
        "context_injected",
    }
)


class _WithoutNul(BaseModel):
    """A model none of whose text fields may hold U+0000: PostgreSQL's text cannot, so it
    is refused on both engines alike. An event's ``data`` may hold it (stored as JSON
    text, escaped)."""

    @field_validator("*")
    @classmethod
    def _without_nul(cls, value: Any) -> Any:
        if isinstance(value, str) and "\x00" in value:
            raise PydanticCustomError("nul_character", NUL_REFUSED)
        return value


class Envelope(_WithoutNul):
    """``{hookType, sessionId, project, cwd, timestamp, data, agentId?, eventId?}``."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    hook_type: Annotated[_Required, Field(alias="hookType", max_length=64)]
    session_id: Annotated[_Required, Field(alias="sessionId", max_length=256)]
    project: Annotated[_Required, Field(max_length=512)]
    cwd: Annotated[_Required, Field(max_length=4096)]
    timestamp: Annotated[_Required, Field(max_length=64)]
    data: Any = None
    agent_id: Annotated[str | None, Field(alias="agentId", max_length=128)] = None
    event_id: Annotated[str | None, Field(alias="eventId", min_length=1, max_length=256)] = None


def carries_work(envelope: Envelope) -> bool:
    """Whether an event is the session's work, and so earns the session a board row."""
    return envelope.hook_type not in NO_WORK_HOOKS


class SessionStart(_WithoutNul):
    """``POST /session/start``: ``{sessionId, project, cwd, title?, agentId?}``."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    session_id: Annotated[_Required, Field(alias="sessionId", max_length=256)]
    project: Annotated[_Required, Field(max_length=512)]
    cwd: Annotated[_Required, Field(max_length=4096)]
    title: Annotated[str | None, Field(max_length=512)] = None
    agent_id: Annotated[str | None, Field(alias="agentId", max_length=128)] = None


def parse_json(body: bytes) -> Any:
    """Decode a request body, with an error that says what is wrong with it.

    The one way memvault reads a JSON body (the routes FastAPI validates are decoded here
    too, and so are spooled events), so every body meets the same limits: UTF-8, well
    formed, at most ``jsontext.MAX_DEPTH`` levels deep, integers of at most
    ``jsontext.MAX_INT_DIGITS`` digits, no lone surrogates."""
    if not body.strip():
        raise InvalidInput("request body is empty; expected a JSON object")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"request body is not valid UTF-8 (byte {exc.start})") from None
    try:
        return jsontext.loads(text)
    except jsontext.NotUnicode as exc:
        fields = [exc.field] if exc.field else []
        raise InvalidInput(f"request body is not valid Unicode: {exc}", fields=fields) from None
    except jsontext.UnusableJson as exc:
        raise InvalidInput(f"request body refused: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None


def refuse_nul(value: Any, *, keep: frozenset[str] = frozenset()) -> None:
    """Refuse text holding U+0000 anywhere in ``value`` (but under a key in ``keep``),
    naming where: the one rule for what a store cannot hold."""
    field = jsontext.nul_in(value, keep=keep)
    if field is not None:
        raise InvalidInput(f"{field or 'body'} {NUL_REFUSED}", fields=[field or "body"])


def validate(model: type[BaseModel], value: Any, *, where: str = "") -> Any:
    """Validate a decoded JSON value against ``model``, naming every bad field."""
    if not isinstance(value, dict):
        kind = type(value).__name__ if value is not None else "null"
        raise InvalidInput(f"{where or 'body'} must be a JSON object, not {kind}")
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise invalid_from(exc, where=where) from None


def invalid_from(exc: ValidationError, *, where: str = "") -> InvalidInput:
    return invalid_from_errors(exc.errors(include_url=False), where=where)


def invalid_from_errors(errors: Sequence[Any], *, where: str = "") -> InvalidInput:
    """One ``InvalidInput`` naming every field of pydantic's ``errors``."""
    problems, fields = [], []
    for error in errors:
        field = ".".join(str(part) for part in error["loc"])
        if where:
            field = f"{where}.{field}" if field else where
        fields.append(field or "body")
        problems.append(f"{field or 'body'}: {_describe(error)}")
    return InvalidInput("; ".join(problems), fields=fields)


def _describe(error: dict[str, Any]) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required"
    if kind == "string_type":
        return "must be a string"
    if kind == "string_too_short":
        return "must be a non-empty string"
    if kind == "string_too_long":
        return f"must be at most {error['ctx']['max_length']} characters"
    return error["msg"]
