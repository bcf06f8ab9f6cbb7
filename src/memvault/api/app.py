"""The FastAPI application: the composition root of the HTTP server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from memvault import __version__, viewer
from memvault.api import archive, board, graph, mcp_routes, purge, recall, schemas, upkeep
from memvault.api import importer as transcript_import
from memvault.api.docs import serve_docs
from memvault.api.guards import BearerAuth, BodyLimit, BrowserGuard, NulGuard
from memvault.api.responses import JSONResponse, answer_errors
from memvault.api.routes import router
from memvault.cli.banner import announce
from memvault.config import Settings, is_loopback
from memvault.memory import Memory
from memvault.viewer.login import Passes

# Answers any route may give, from the guards and handlers in front of them all.
COMMON_ANSWERS = {
    "400": "Invalid input: `error` names the problem and `fields` the fields; nothing was written",
    "401": "Missing or wrong bearer secret (when the server has one)",
    "403": "A request from a web page (a foreign `Origin`)",
    "413": "Body larger than the configured limit",
    "421": "A foreign `Host` on a loopback bind",
    "503": "The store could not write; nothing of the request was kept, and it may be retried",
}


def _document_common_answers(app: FastAPI) -> None:
    """Say in the OpenAPI document what every route may answer, once for all, and that
    every error is an ``Error`` (a route may say more, as the board's 409 does). FastAPI's
    own 422 is never sent: invalid input is a 400, as the hand-read routes answer it."""
    generate = app.openapi
    error = {"$ref": "#/components/schemas/Error"}

    def openapi() -> dict[str, Any]:
        document = generate()  # built once, then FastAPI's cached copy
        found = document.setdefault("components", {}).setdefault("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            found.pop(name, None)
        for named in schemas.REFERENCED:  # by name, in answers that join two shapes
            schema = named.model_json_schema(ref_template="#/components/schemas/{model}")
            found.update(schema.pop("$defs", {}))
            found[named.__name__] = schema
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                answers = operation.setdefault("responses", {})
                answers.pop("422", None)
                for status, description in COMMON_ANSWERS.items():
                    answers.setdefault(status, {"description": description})
                for status, answer in answers.items():
                    if int(status) >= 400:
                        content = answer.setdefault("content", {}).setdefault(
                            "application/json", {}
                        )
                        if not content.get("schema"):
                            content["schema"] = error
        return document

    app.openapi = openapi  # type: ignore[method-assign]


def create_app(settings: Settings | None = None, memory: Memory | None = None) -> FastAPI:
    """Build the app. It opens (and at shutdown closes) its own ``Memory`` unless given one."""
    settings = settings or (memory.settings if memory else Settings())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = memory is None
        app.state.memory = opened = memory or Memory.open(settings)
        opened.serving.start()
        announce(opened)
        try:
            async with mcp_routes.serving(app):
                yield
        finally:
            opened.serving.stop()
            if owned:
                opened.close()

    app = FastAPI(
        title="memvault",
        version=__version__,
        summary="Lasting memory for AI coding agents (agentmemory-compatible REST).",
        lifespan=lifespan,
        default_response_class=JSONResponse,
        docs_url=None,  # served with local assets instead: the docs work offline
        redoc_url=None,
    )
    serve_docs(app)
    app.include_router(router)
    app.include_router(board.router)
    app.include_router(recall.router)
    app.include_router(upkeep.router)
    app.include_router(purge.router)
    app.include_router(graph.router)
    app.include_router(transcript_import.router)
    app.include_router(archive.router)
    app.include_router(mcp_routes.router)
    mcp_routes.mount(app, settings)
    viewer.mount(app)  # the web viewer, at /
    _document_common_answers(app)

    answer_errors(app)

    # Outermost last: size is checked before anything reads the body, the secret before
    # a path or query is looked into.
    app.add_middleware(NulGuard)
    app.add_middleware(
        BearerAuth,
        secret=settings.secret_value(),
        viewer_pages=viewer.PAGES,
        viewer_open=viewer.OPEN,
        viewer_feeds=viewer.FEEDS,
        login=viewer.LOGIN,
        viewer_cookie=passes.opens if (passes := Passes.of(settings)) else None,
    )
    app.add_middleware(BrowserGuard, loopback=is_loopback(settings.host))
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    return app
