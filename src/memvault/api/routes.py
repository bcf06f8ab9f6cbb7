"""agentmemory-compatible routes under ``/agentmemory/``: ingest, sessions, observations, ops.

Handlers parse, call ``Memory`` and answer in ``present``'s shapes. Bodies are read by hand
so a malformed body gets an error that says what is wrong with it (and nothing is written).
"""

from __future__ import annotations

import os
from typing import Annotated, Any

from fastapi import Query, Request
from pydantic import Field
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from memvault import __version__, present
from memvault.api import schemas
from memvault.api.operation import (
    MAX_OFFSET,
    Answers,
    Body,
    Served,
    answer,
    examples,
    json_body,
    link,
    memory_of,
    routes,
)
from memvault.api.responses import JSONResponse
from memvault.errors import InvalidInput
from memvault.ingest.envelope import Envelope, SessionStart, carries_work, parse_json, validate

BULK_LIMIT = 500
router = routes("/agentmemory")


_ERRORS: Answers = {
    400: {"description": "Invalid input; `error` names the problem, nothing was written"},
    401: {"description": "Missing or wrong bearer secret"},
    413: {"description": "Body larger than the configured limit"},
}

_ENVELOPE_SCHEMA = Envelope.model_json_schema(by_alias=True)
ENVELOPE_EXAMPLE = {
    "hookType": "post_tool_use",
    "sessionId": "c0ffee",
    "project": "demo-app",
    "cwd": "/home/me/code/demo-app",
    "timestamp": "2026-11-30T10:00:00.000Z",
    "data": {"tool_name": "Bash", "tool_input": {"command": "npm test"}, "tool_output": "ok"},
    "agentId": "claude-code",
    "eventId": "c0ffee-42",
}


# A session's events, from the answer to any of its events.
_SESSION = "$request.body#/sessionId"
_SESSION_LINKS = {
    "observations": link("get", "/agentmemory/observations", parameters={"sessionId": _SESSION}),
    "summarize": link("post", "/agentmemory/summarize", request_body={"sessionId": _SESSION}),
}
# What an agent learned while working on the session's project.
_OBSERVE_LINKS = {
    **_SESSION_LINKS,
    "remember": link(
        "post", "/agentmemory/remember", request_body={"project": "$request.body#/project"}
    ),
}


@router.post(
    "/observe",
    status_code=201,
    summary="Record one hook event",
    description=(
        "Stores the event in the immutable log with its synthetic observation, creating the "
        "session on its first event. A repeated `(sessionId, eventId)` is not stored again: "
        "the answer says `deduplicated` and carries the original ids."
    ),
    openapi_extra=json_body(_ENVELOPE_SCHEMA, ENVELOPE_EXAMPLE),
    responses={
        201: {"description": "Stored", "model": schemas.Observed, "links": _OBSERVE_LINKS},
        **_ERRORS,
    },
)
async def observe(request: Request) -> JSONResponse:
    envelope = validate(Envelope, parse_json(await request.body()))
    memory = memory_of(request)
    result = await memory.capture.observe_async(envelope)
    background = None
    if (
        not result.deduplicated
        and carries_work(envelope)
        and memory.board.needs_board_row(envelope.session_id)
    ):
        # A session that never sent session/start gets its board row after the answer,
        # off the hook's clock.
        background = BackgroundTask(
            memory.board.register_from_event, envelope.session_id, envelope.agent_id
        )
    return JSONResponse(
        present.observe_result(result),
        status_code=201,
        background=background,
        headers=_whose(request),
    )


def _whose(request: Request) -> dict[str, str]:
    """The home and vault this server serves, as headers a hook compares with its own
    (``%``-escaped: a header carries ASCII, a path may not be); made once per app."""
    found = getattr(request.app.state, "whose", None)
    if found is None:
        from urllib.parse import quote

        settings = memory_of(request).settings
        found = {
            "Memvault-Home": quote(str(settings.home.resolve())),
            "Memvault-Vault": quote(str(settings.vault_path.resolve())),
        }
        request.app.state.whose = found
    return found


@router.post(
    "/observe/bulk",
    summary="Record up to 500 hook events",
    description=(
        "Each item is validated and stored on its own: a bad item is reported in `errors` "
        "(with its index) and does not fail the others."
    ),
    openapi_extra=json_body(
        {
            "type": "object",
            "required": ["observations"],
            "properties": {
                "observations": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": BULK_LIMIT,
                    "items": _ENVELOPE_SCHEMA,
                }
            },
        },
        {"observations": [ENVELOPE_EXAMPLE, {**ENVELOPE_EXAMPLE, "eventId": "c0ffee-43"}]},
    ),
    responses={
        200: {"description": "Each item's result", "model": schemas.BulkObserved},
        **_ERRORS,
    },
)
async def observe_bulk(request: Request) -> JSONResponse:
    body = parse_json(await request.body())
    if not isinstance(body, dict):
        raise InvalidInput("body must be a JSON object with an `observations` array")
    items = body.get("observations")
    if not isinstance(items, list):
        raise InvalidInput("observations: required, an array of envelopes", fields=["observations"])
    if not 1 <= len(items) <= BULK_LIMIT:
        raise InvalidInput(
            f"observations: must hold 1 to {BULK_LIMIT} items, got {len(items)}",
            fields=["observations"],
        )
    bulk = await memory_of(request).capture.observe_many_async(items)
    return JSONResponse(present.bulk_result(bulk))


@router.post(
    "/session/start",
    summary="Declare a session and get its Memory Session ID (optional: events create it)",
    openapi_extra=json_body(
        SessionStart.model_json_schema(by_alias=True),
        {
            "sessionId": "c0ffee",
            "project": "demo-app",
            "cwd": "/home/me/code/demo-app",
            "title": "Fix the flaky test",
            "agentId": "claude-code",
        },
    ),
    response_model=None,
    responses={
        200: {
            "description": "The session, its board row's id and the memory block to inject",
            "model": schemas.SessionStarted,
            "links": {
                **_OBSERVE_LINKS,
                "boardRow": link(
                    "get",
                    "/agentmemory/board/sessions/{session_id}",
                    parameters={"session_id": "$response.body#/memorySessionId"},
                ),
            },
        },
        409: {"description": "A board memvault will not change (a row twice, say)"},
        **_ERRORS,
    },
)
async def session_start(request: Request) -> dict[str, Any]:
    start = validate(SessionStart, parse_json(await request.body()))
    started = await run_in_threadpool(memory_of(request).context.start_session, start)
    return present.session_started(started)


class SummarizeRequest(Body):
    model_config = examples({"sessionId": "c0ffee"})

    session_id: Annotated[str, Field(alias="sessionId", min_length=1, max_length=256)]


@router.post(
    "/summarize",
    status_code=202,
    summary="Bring a session's summary up to date (a turn ended)",
    description=(
        "Queues the session's summary; the worker merges the events past its watermark and "
        "updates its board row and snapshot. Answers at once: nothing waits for the work."
    ),
    **answer("Queued", schemas.SummaryQueued, _ERRORS, status=202),
)
async def summarize(memory: Served, body: SummarizeRequest) -> dict[str, Any]:
    if await run_in_threadpool(memory.reads.session, body.session_id) is None:
        raise InvalidInput(f"no session {body.session_id!r}", fields=["sessionId"])
    queued = await run_in_threadpool(memory.pipeline.request_summary, body.session_id)
    return {"success": True, "queued": queued, "sessionId": body.session_id}


@router.post(
    "/session/end",
    summary="Deprecated no-op",
    description=(
        "Conversations are open-ended, so this never closes a session, stamps completion, "
        "triggers processing or rejects later events. Kept so older hooks keep working."
    ),
    **answer("Nothing was done", schemas.Noop),
)
async def session_end() -> dict[str, Any]:
    return {"success": True, "noop": True}


@router.get(
    "/sessions",
    summary="Sessions, most recently active first",
    **answer("The sessions", schemas.Sessions),
)
def sessions(
    memory: Served,
    agent_id: Annotated[str | None, Query(alias="agentId")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> dict[str, Any]:
    found = memory.reads.sessions(limit=limit, offset=offset, agent_id=agent_id)
    return {"sessions": [present.session(s) for s in found]}


@router.get(
    "/observations",
    summary="A session's observations, in event order",
    **answer("The observations", schemas.Observations),
)
def observations(
    memory: Served,
    session_id: Annotated[str, Query(alias="sessionId", min_length=1)],
    limit: Annotated[int, Query(ge=1, le=5000)] = 1000,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> dict[str, Any]:
    found = memory.reads.observations(session_id, limit=limit, offset=offset)
    return {"observations": [present.observation(o) for o in found]}


@router.get(
    "/livez",
    summary="Liveness (always public)",
    **answer("The server answers", schemas.Live),
)
async def livez() -> dict[str, Any]:
    return {"status": "ok", "service": "memvault", "version": __version__}


@router.get(
    "/server",
    summary="Which memory this server serves: its home, vault and pid, and what started it",
    **answer("The server", schemas.ServerIdentity),
)
async def server_identity(request: Request, memory: Served) -> dict[str, Any]:
    # Clients compare this with the memory their own environment names, so that an editor
    # pinned to one vault never writes into a server serving another.
    settings = memory.settings
    vault = settings.vault_path.resolve()
    return {
        "service": "memvault",
        "version": __version__,
        "pid": os.getpid(),
        "url": settings.server_url,
        "home": str(settings.home.resolve()),
        "vault": str(vault),
        "vaultName": vault.name,
        "startedBy": getattr(request.app.state, "started_by", None) or None,
    }


@router.get(
    "/health",
    summary="Status, store, queue, vault, embedder, LLM and how far search is behind",
    responses={
        200: {"description": "The report", "model": schemas.Health},
        503: {
            "description": "The report, when the status is critical",
            "content": {
                "application/json": {
                    "schema": {
                        "anyOf": [
                            {"$ref": "#/components/schemas/Health"},
                            {"$ref": "#/components/schemas/Error"},
                        ]
                    }
                }
            },
        },
    },
)
def health(memory: Served) -> JSONResponse:
    report = present.health(memory.health.report())
    return JSONResponse(report, status_code=200 if report["status"] != "critical" else 503)
