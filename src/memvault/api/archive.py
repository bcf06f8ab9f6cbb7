"""``GET /agentmemory/export`` (the archive, streamed as NDJSON), ``POST
/agentmemory/import {exportData, strategy?}`` (agentmemory's route and answer, with
memvault's report beside them) and ``POST /agentmemory/import/archive`` (an archive file
of any size as the body, streamed). See docs/export.md."""

from __future__ import annotations

import tempfile
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from memvault.api import schemas
from memvault.api.guards import DecodedBodyRoute
from memvault.api.responses import JSONResponse
from memvault.archive import (
    MEDIA_TYPE,
    ArchiveError,
    Export,
    ImportReport,
    import_document,
    import_stream,
)
from memvault.errors import InvalidInput
from memvault.ingest.envelope import parse_json, validate

router = APIRouter(prefix="/agentmemory", tags=["export"], route_class=DecodedBodyRoute)


class ImportBody(BaseModel):
    model_config = ConfigDict(
        extra="ignore",
        populate_by_name=True,
        json_schema_extra={
            "examples": [
                {
                    "exportData": {
                        "version": "0.9.29",
                        "exportedAt": "2026-11-30T10:00:00.000Z",
                        "sessions": [],
                        "observations": {},
                        "memories": [],
                        "summaries": [],
                    },
                    "strategy": "merge",
                }
            ]
        },
    )

    export_data: Annotated[
        Any,
        Field(
            alias="exportData",
            description="agentmemory's ExportData object, or a memvault archive: its "
            "records as a list (header first) or its NDJSON text",
        ),
    ]
    strategy: Literal["merge", "skip", "replace"] = "merge"


@router.get(
    "/export",
    summary="All memory as a versioned archive (NDJSON, streamed)",
    description=(
        "A header line, then sessions, events (with `includeEvents=true`), fragments, the "
        "session board and snapshots, one JSON record per line, ending with an `end` "
        "record. Derived data (observations, summaries, graph, index) is not exported."
    ),
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {MEDIA_TYPE: {"schema": {"type": "string", "description": "NDJSON"}}},
            "description": "The archive",
        }
    },
)
async def export(
    request: Request,
    include_events: Annotated[bool, Query(alias="includeEvents")] = False,
) -> StreamingResponse:
    archive = Export(request.app.state.memory, events=include_events)
    return StreamingResponse(
        archive.chunks(),  # a plain iterator: read on the thread pool, chunk by chunk
        media_type=MEDIA_TYPE,
        headers={"Content-Disposition": f'attachment; filename="{archive.file_name}"'},
    )


@router.post(
    "/import",
    summary="Import a memvault archive or agentmemory's export",
    description=(
        "Events already stored are not stored again, whatever the strategy. `merge` adds "
        "what is missing and merges near-duplicate fragments; `skip` only adds what is "
        "missing; `replace` lets the archive's files overwrite the vault's. The body limit "
        "applies: import bigger archives with `memvault import memvault FILE`."
    ),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": ImportBody.model_json_schema(by_alias=True)}
            },
        }
    },
    responses={
        200: {"description": "What was written and the report", "model": schemas.Imported},
        400: {"description": "Not an archive or export memvault reads; nothing was written"},
        413: {"description": "Body larger than the configured limit"},
    },
)
async def import_(request: Request) -> JSONResponse:
    try:
        body = validate(ImportBody, parse_json(await request.body()))
        if body.export_data is None:
            raise InvalidInput("exportData is required", fields=["exportData"])
        report = await run_in_threadpool(
            import_document, request.app.state.memory, body.export_data, strategy=body.strategy
        )
    except InvalidInput as exc:  # an ArchiveError too: refused before anything was written
        return JSONResponse({"success": False, "error": exc.message}, status_code=400)
    return JSONResponse(answer(report))


def answer(report: ImportReport) -> dict[str, Any]:
    """agentmemory's answer (what was written, what was not) and memvault's report."""

    def written(kind: str) -> int:
        counts = report.counts.get(kind)
        return counts.new + counts.merged + counts.replaced if counts else 0

    return {
        "success": True,
        "strategy": report.strategy,
        "sessions": written("session"),
        "observations": written("event"),
        "memories": written("memory") + written("fragment"),
        "summaries": 0,
        "skipped": report.total("existing") + report.total("skipped"),
        "report": report.to_dict(),
    }


SPOOL_IN_MEMORY = 1024 * 1024  # an upload beyond this waits on disk, not in memory


@router.post(
    "/import/archive",
    summary="Import an archive file of any size, sent as the body",
    description=(
        "The body is a file `memvault export` wrote (NDJSON), or agentmemory's export "
        "(JSON), told apart by content; it is streamed to disk as it arrives, so the body "
        "limit does not apply. What is stored is the same as `POST /import` stores; the "
        "answer is memvault's report."
    ),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                MEDIA_TYPE: {"schema": {"type": "string", "description": "NDJSON"}},
                "application/json": {
                    "schema": {
                        "type": "object",
                        "description": "agentmemory's ExportData",
                        "examples": [
                            {
                                "version": "0.9.29",
                                "exportedAt": "2026-11-30T10:00:00.000Z",
                                "sessions": [],
                                "observations": {},
                                "memories": [],
                                "summaries": [],
                            }
                        ],
                    }
                },
            },
        }
    },
    response_model=None,
    responses={
        200: {"description": "The report", "model": schemas.ArchiveReport},
        400: {"description": "Not an archive or export memvault reads; nothing was written"},
    },
)
async def import_archive(
    request: Request,
    strategy: Annotated[Literal["merge", "skip", "replace"], Query()] = "merge",
) -> JSONResponse:
    memory = request.app.state.memory
    with tempfile.SpooledTemporaryFile(
        SPOOL_IN_MEMORY, dir=memory.settings.home, prefix=".import-"
    ) as upload:
        async for chunk in request.stream():
            await run_in_threadpool(upload.write, chunk)
        upload.seek(0)
        try:
            report = await run_in_threadpool(import_stream, memory, upload, strategy=strategy)
        except ArchiveError as exc:
            return JSONResponse({"error": exc.message}, status_code=400)
    return JSONResponse(report.to_dict())
