"""``GET /agentmemory/export`` (the archive, streamed as NDJSON), ``POST
/agentmemory/import {exportData, strategy?}`` (agentmemory's route and answer, with
memvault's report beside them) and ``POST /agentmemory/import/archive`` (an archive file
of any size as the body, streamed). See docs/export.md."""

from __future__ import annotations

import tempfile
from typing import Annotated, Any, Literal

from fastapi import Query, Request
from fastapi.responses import StreamingResponse
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from memvault import present
from memvault.api import schemas
from memvault.api.operation import (
    Body,
    answer,
    examples,
    memory_of,
    model_body,
    request_body,
    routes,
)
from memvault.api.responses import JSONResponse
from memvault.archive import (
    MEDIA_TYPE,
    ArchiveError,
    Export,
    import_document,
    import_stream,
)
from memvault.errors import InvalidInput
from memvault.ingest.envelope import parse_json, refuse_nul, validate

router = routes("/agentmemory", "export")

# An empty export of agentmemory's, as the examples show it.
_EXPORT_DATA = {
    "version": "0.9.29",
    "exportedAt": "2026-11-30T10:00:00.000Z",
    "sessions": [],
    "observations": {},
    "memories": [],
    "summaries": [],
}

# An archived event's payload may hold U+0000: it is stored as JSON text, escaped.
EVENT_PAYLOADS = frozenset({"data"})


class ImportBody(Body):
    model_config = examples({"exportData": _EXPORT_DATA, "strategy": "merge"})

    export_data: Annotated[
        Any,
        Field(
            alias="exportData",
            description="agentmemory's ExportData object, or a memvault archive: its "
            "records as a list (header first) or its NDJSON text",
        ),
    ]
    strategy: Literal["merge", "skip", "replace"] = "merge"


_NDJSON = {"schema": {"type": "string", "description": "NDJSON"}}
_NOT_READ = {400: {"description": "Not an archive or export memvault reads; nothing was written"}}


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
            "content": {MEDIA_TYPE: _NDJSON},
            "description": "The archive",
        }
    },
)
async def export(
    request: Request,
    include_events: Annotated[bool, Query(alias="includeEvents")] = False,
) -> StreamingResponse:
    archive = Export(memory_of(request), events=include_events)
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
    openapi_extra=model_body(ImportBody),
    responses={
        200: {"description": "What was written and the report", "model": schemas.Imported},
        **_NOT_READ,
        413: {"description": "Body larger than the configured limit"},
    },
)
async def import_(request: Request) -> JSONResponse:
    try:
        decoded = parse_json(await request.body())
        refuse_nul(decoded, keep=EVENT_PAYLOADS)
        body = validate(ImportBody, decoded)
        if body.export_data is None:
            raise InvalidInput("exportData is required", fields=["exportData"])
        report = await run_in_threadpool(
            import_document, memory_of(request), body.export_data, strategy=body.strategy
        )
    except InvalidInput as exc:  # an ArchiveError too: refused before anything was written
        return JSONResponse({"success": False, "error": exc.message}, status_code=400)
    return JSONResponse(present.imported(report))


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
    openapi_extra=request_body(
        {
            MEDIA_TYPE: _NDJSON,
            "application/json": {
                "schema": {
                    "type": "object",
                    "description": "agentmemory's ExportData",
                    "examples": [_EXPORT_DATA],
                }
            },
        }
    ),
    **answer("The report", schemas.ArchiveReport, _NOT_READ),
)
async def import_archive(
    request: Request,
    strategy: Annotated[Literal["merge", "skip", "replace"], Query()] = "merge",
) -> JSONResponse:
    memory = memory_of(request)
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
