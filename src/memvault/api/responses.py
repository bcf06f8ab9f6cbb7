"""JSON responses encoded with memvault's fast encoder (bulk answers carry 500 results), and
the one table that turns an error into the REST answer a client reads."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse as _StarletteJSON
from mcp.server.mcpserver.exceptions import ToolError
from starlette.exceptions import HTTPException

from memvault import jsontext
from memvault.api.guards import BodyTooLarge
from memvault.errors import InvalidInput, StoreFailure
from memvault.ingest.envelope import invalid_from_errors
from memvault.mcp_server.answers import ToolRefusal
from memvault.vault.board import BoardFormatError
from memvault.vault.owner import VaultWriteQueued

log = logging.getLogger("memvault.api")
_SOURCES = frozenset({"query", "body", "path", "header", "cookie"})  # where, not which field


class JSONResponse(_StarletteJSON):
    def render(self, content: Any) -> bytes:
        return jsontext.dumps(content).encode()


def _invalid_input(exc: InvalidInput) -> JSONResponse:
    payload: dict[str, Any] = {"error": exc.message}
    if exc.fields:
        payload["fields"] = exc.fields
    return JSONResponse(payload, status_code=exc.status)


def _invalid_request(exc: RequestValidationError) -> JSONResponse:
    # Each field named as /observe names it, with the same words.
    errors = [
        {**e, "loc": tuple(e["loc"])[1:]} if e["loc"] and e["loc"][0] in _SOURCES else e
        for e in exc.errors()
    ]
    return _invalid_input(invalid_from_errors(errors))


def _said(status: int) -> Callable[[Exception], JSONResponse]:
    """The error's own words, at ``status``."""
    return lambda exc: JSONResponse({"error": str(exc)}, status_code=status)


def _said_at_its_status(exc: StoreFailure) -> JSONResponse:
    return JSONResponse({"error": str(exc)}, status_code=exc.status)


def _queued(exc: VaultWriteQueued) -> JSONResponse:
    # Kept in the database: the replica that owns the vault writes it. No retry needed.
    return JSONResponse({"accepted": True, "queued": exc.write_id, "message": str(exc)}, 202)


def _http(exc: HTTPException) -> JSONResponse:
    return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code)


# The REST answer to each error a route may leave to the app, most specific first.
ANSWERS: dict[type[Exception], Callable[[Any], JSONResponse]] = {
    InvalidInput: _invalid_input,
    RequestValidationError: _invalid_request,
    # A board edited into a shape memvault will not change; the person fixes it.
    BoardFormatError: _said(409),
    BodyTooLarge: _said(413),
    StoreFailure: _said_at_its_status,
    VaultWriteQueued: _queued,
    HTTPException: _http,
}


def answer_errors(app: FastAPI) -> None:
    """Answer every error in ``ANSWERS`` as it says, and any other as a logged 500."""
    for error, answer in ANSWERS.items():
        app.add_exception_handler(error, _handler(answer))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse({"error": f"internal error: {type(exc).__name__}"}, status_code=500)


def _handler(
    answer: Callable[[Any], JSONResponse],
) -> Callable[[Request, Exception], Awaitable[JSONResponse]]:
    async def handle(_: Request, exc: Exception) -> JSONResponse:
        return answer(exc)

    return handle


def tool_error_answer(exc: ToolError) -> JSONResponse:
    """A tool's error called over REST: a refusal at its own status (a board report with
    it), any other at 400."""
    cause = exc.__cause__
    if isinstance(cause, ToolRefusal):
        return JSONResponse({"error": str(exc), **cause.details()}, status_code=cause.status)
    return JSONResponse({"error": str(exc)}, status_code=400)
