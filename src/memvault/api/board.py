"""Routes for the session board under ``/agentmemory/board/``.

Each answers with the operation's report: 200 when it was done, 409 when it was refused or
could not be completed (``error`` says why; the files are as they were).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError
from starlette.concurrency import run_in_threadpool

from memvault import present
from memvault.api import schemas
from memvault.api.operation import Served, StrictBody, answer, examples, link, routes
from memvault.api.responses import JSONResponse
from memvault.errors import InvalidInput
from memvault.triggers import recognise
from memvault.vault.lifecycle import Report

MAX_STALE_DAYS = 3650  # ten years, as the MCP tool takes

router = routes("/agentmemory/board", "session board")


_SECTIONS_EXAMPLE = {
    "topic": "Flaky checkout test",
    "sections": {
        "Current Context": "The retry in the payment mock is gone; the test passes 50 runs.",
        "Next Actions": ["Remove the skip in CI", "Open the pull request"],
    },
}
_ROW_ID = "2026-11-30-1432-claude-code-main-agent"


class Content(StrictBody):
    model_config = examples(_SECTIONS_EXAMPLE)

    snapshot: Annotated[str | None, Field(description="Markdown with template sections")] = None
    sections: Annotated[
        dict[str, str | list[str]] | None,
        Field(description="Section name → text or list of items"),
    ] = None
    topic: str | None = None
    summary: str | None = None
    keywords: str | None = None

    @field_validator("topic")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        # A topic is a cell of the board and a title: a line break in it has no place.
        if value is not None and any(c in value for c in "\r\n\u2028\u2029"):
            raise PydanticCustomError("one_line", "must be one line: it holds a line break")
        return value

    def content(self) -> Any:
        if self.snapshot is not None and self.sections is not None:
            raise InvalidInput("give either snapshot or sections, not both")
        return self.snapshot if self.snapshot is not None else self.sections


class Register(Content):
    model_config = examples(
        {"agentName": "claude-code-main-agent"},
        {"agentName": "claude-code-main-agent", "manual": True, **_SECTIONS_EXAMPLE},
    )

    agent_name: Annotated[str | None, Field(alias="agentName")] = None
    manual: bool = False


class Continue(StrictBody):
    model_config = examples({"source": _ROW_ID, "agentName": "cursor-main-agent"})

    source: str
    current: str | None = None
    agent_name: Annotated[str | None, Field(alias="agentName")] = None


class Release(StrictBody):
    model_config = examples({"source": _ROW_ID, "current": "2026-12-01-0910-cursor-main-agent"})

    source: str
    current: str


class Archive(StrictBody):
    model_config = examples({"force": False})

    force: bool = False


class Organize(StrictBody):
    model_config = examples({"dryRun": True, "staleDays": 14})

    dry_run: Annotated[bool, Field(alias="dryRun")] = False
    stale_days: Annotated[int | None, Field(alias="staleDays", ge=1, le=MAX_STALE_DAYS)] = None


class Prompt(StrictBody):
    model_config = examples({"prompt": "please update memory session"})

    prompt: str


def _row_link(method: str, path: str, **kwargs: Any) -> dict[str, Any]:
    return link(method, f"/agentmemory/board{path}", **kwargs)


# What can be done with a board row, from the answer that registered it.
_ROW = "$response.body#/sessionId"
_ROW_LINKS = {
    "row": _row_link("get", "/sessions/{session_id}", parameters={"session_id": _ROW}),
    "update": _row_link("post", "/sessions/{session_id}/update", parameters={"session_id": _ROW}),
    "archive": _row_link("post", "/sessions/{session_id}/archive", parameters={"session_id": _ROW}),
    "continue": _row_link("post", "/continue", request_body={"source": _ROW}),
}
# A refusal carries the operation's report; a board memvault will not change (a row
# twice, a byte that is not UTF-8) is a plain error naming the line.
_REFUSED = {
    "description": "Refused or not completed; `error` says why, the files are as they were",
    "content": {
        "application/json": {
            "schema": {
                "anyOf": [
                    {"$ref": "#/components/schemas/BoardRefusal"},
                    {"$ref": "#/components/schemas/Error"},
                ]
            }
        }
    },
}
_UNREADABLE: dict[int | str, dict[str, Any]] = {
    409: {"description": "A board memvault will not read; `error` names the line"}
}
_DONE = {"description": "The report", "model": schemas.BoardReport}
_REPORTS: dict[int | str, dict[str, Any]] = {200: _DONE, 409: _REFUSED, **schemas.QUEUED}


def _answer(report: Report) -> JSONResponse:
    body = report.to_dict()
    if not report.ok:
        body["error"] = report.message
    return JSONResponse(body, status_code=200 if report.ok else 409)


async def _run(function, *args, **kwargs) -> JSONResponse:
    try:
        report = await run_in_threadpool(function, *args, **kwargs)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    return _answer(report)


@router.get(
    "/sessions",
    summary="Board rows, in reading priority",
    **answer("The rows", schemas.BoardRows, _UNREADABLE),
)
def sessions(memory: Served) -> dict[str, Any]:
    return {"sessions": [present.board_row(row) for row in memory.board.rows()]}


@router.get(
    "/sessions/{session_id}",
    summary="One board row and its snapshot",
    responses={
        200: {"description": "The row and its snapshot", "model": schemas.BoardRowWithSnapshot},
        400: {"description": "A row whose Session ID names no snapshot file memvault reads"},
        404: {"description": "No such row on the board"},
        **_UNREADABLE,
    },
)
def session(memory: Served, session_id: str) -> JSONResponse:
    entry = memory.board.entry(session_id, scan=None)
    if entry is None:
        return JSONResponse({"error": f"{session_id} is not on the board"}, status_code=404)
    if entry.unreadable is not None:  # a hand-edited row whose id is no Memory Session ID
        raise InvalidInput(entry.unreadable)
    return JSONResponse(present.board_entry(entry))


@router.post(
    "/register",
    summary="Register a session (idle, or manual: active with a snapshot)",
    responses={**_REPORTS, 200: {**_DONE, "links": _ROW_LINKS}},
)
async def register(memory: Served, body: Register) -> JSONResponse:
    return await _run(
        memory.board.register_session,
        agent=body.agent_name,
        manual=body.manual,
        topic=body.topic,
        summary=body.summary,
        keywords=body.keywords,
        content=body.content(),
    )


@router.post(
    "/sessions/{session_id}/update",
    summary="Merge into the snapshot, update the row",
    responses=_REPORTS,
)
async def update(memory: Served, session_id: str, body: Content) -> JSONResponse:
    return await _run(
        memory.board.update_session,
        session_id,
        body.content(),
        topic=body.topic,
        summary=body.summary,
        keywords=body.keywords,
    )


@router.post(
    "/continue", summary="Continue a source session from the current one", responses=_REPORTS
)
async def continue_(memory: Served, body: Continue) -> JSONResponse:
    return await _run(
        memory.board.continue_session, body.current, body.source, agent=body.agent_name
    )


@router.post(
    "/release", summary="Release the current session's reference to a source", responses=_REPORTS
)
async def release(memory: Served, body: Release) -> JSONResponse:
    return await _run(memory.board.release_session, body.current, body.source)


@router.post("/sessions/{session_id}/archive", summary="Archive one session", responses=_REPORTS)
async def archive(memory: Served, session_id: str, body: Archive | None = None) -> JSONResponse:
    force = body.force if body else False
    return await _run(memory.board.archive_session, session_id, force=force)


@router.post(
    "/organize", summary="Delete idle rows, mark overdue active rows stale", responses=_REPORTS
)
async def organize(memory: Served, body: Organize | None = None) -> JSONResponse:
    body = body or Organize()
    return await _run(memory.board.organize, dry_run=body.dry_run, stale_days=body.stale_days)


@router.post(
    "/trigger",
    summary="Which board operation a user prompt asks for, if any",
    **answer("The operation, or null", schemas.Triggered),
)
async def trigger(body: Prompt) -> dict[str, Any]:
    found = recognise(body.prompt)
    return {"trigger": None if found is None else found.to_dict()}
