"""Routes for changing and keeping up memory under ``/agentmemory/``: editing and
deleting one fragment, maintenance (archive unused fragments, L2 summaries), reindexing
and running the pipeline's due jobs now. ``memvault fragments edit|delete``, ``maintain``,
``reindex`` and ``worker --once`` use them when a server runs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from memvault import present
from memvault.api import schemas
from memvault.api.guards import DecodedBodyRoute
from memvault.memory import Memory
from memvault.vault.edit import Edit

router = APIRouter(prefix="/agentmemory", tags=["memory"], route_class=DecodedBodyRoute)

FactLine = Annotated[str, Field(max_length=2000)]


class EditBody(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        json_schema_extra={
            "examples": [
                {"summary": "Loaders are named fetchX.", "addFacts": ["why: one prefix"]},
                {"removeFacts": ["why: one prefix"], "importance": 0.8, "addTags": ["naming"]},
            ]
        },
    )

    summary: Annotated[str | None, Field(max_length=1000)] = None
    facts: Annotated[
        list[FactLine] | None, Field(max_length=200, description="Replaces every fact")
    ] = None
    add_facts: Annotated[list[FactLine], Field(alias="addFacts", max_length=200)] = []
    remove_facts: Annotated[
        list[FactLine],
        Field(alias="removeFacts", max_length=200, description="Fact lines as written"),
    ] = []
    importance: Annotated[float | None, Field(ge=0, le=1)] = None
    tags: Annotated[list[str] | None, Field(max_length=100, description="Replaces the tags")] = None
    add_tags: Annotated[list[str], Field(alias="addTags", max_length=100)] = []
    remove_tags: Annotated[list[str], Field(alias="removeTags", max_length=100)] = []


class MaintainBody(BaseModel):
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, json_schema_extra={"examples": [{"dryRun": True}]}
    )

    dry_run: Annotated[bool, Field(alias="dryRun")] = False


def _memory(request: Request) -> Memory:
    return request.app.state.memory


_ID = "A fragment's id, as search gives it"
# A path no route takes (an id with a line break in it) is answered by the router itself.
_NO_ROUTE = "No route for this path: an id with a control character in it"


@router.patch(
    "/fragments/{fragment_id:path}",
    summary="Change a fragment's summary, facts, importance or tags; the rest of its file stays",
    response_model=None,
    responses={
        200: {"description": "The fragment as edited, whole", "model": schemas.OneMemory},
        400: {"description": "No such fragment, or an edit that cannot be made"},
        404: {"description": _NO_ROUTE},
        **schemas.QUEUED,
    },
)
async def edit(request: Request, fragment_id: str, body: EditBody) -> dict[str, Any]:
    memory = _memory(request)
    change = Edit(
        summary=body.summary,
        facts=body.facts,
        add_facts=body.add_facts,
        remove_facts=body.remove_facts,
        importance=body.importance,
        tags=body.tags,
        add_tags=body.add_tags,
        remove_tags=body.remove_tags,
    )
    entry = await run_in_threadpool(memory.edit_fragment, fragment_id, change)
    return {"memory": present.entry_view(memory, entry)}


@router.delete(
    "/fragments/{fragment_id:path}",
    summary="Delete a fragment's file and what memvault derived from it",
    description=(
        "The pipeline does not learn it again from the same events. With `dryRun=true` the "
        "id is only checked (400 when it names no fragment), which a client asks before a "
        "person confirms."
    ),
    response_model=None,
    responses={
        200: {"description": "Deleted, or checked for a dry run", "model": schemas.FragmentDeleted},
        400: {"description": "No such fragment, or not a fragment"},
        404: {"description": _NO_ROUTE},
        **schemas.QUEUED,
    },
)
async def delete(
    request: Request,
    fragment_id: str,
    dry_run: Annotated[bool, Query(alias="dryRun")] = False,
) -> dict[str, Any]:
    memory = _memory(request)
    if dry_run:
        path = await run_in_threadpool(memory.fragment_path, fragment_id)
        relative = path.relative_to(memory.settings.vault_path).as_posix()
        return {"success": True, "deleted": False, "id": fragment_id, "path": relative}
    deleted = await run_in_threadpool(memory.delete_fragment, fragment_id)
    return {
        "success": True,
        "deleted": True,
        "id": deleted.id,
        "path": deleted.path,
        "summary": deleted.summary,
    }


@router.post(
    "/maintain",
    summary="Archive unused low-importance fragments; write L2 summaries of large projects",
    response_model=None,
    responses={
        200: {"description": "What was (or would be) done", "model": schemas.Maintained},
        **schemas.QUEUED,
    },
)
async def maintain(request: Request, body: MaintainBody | None = None) -> dict[str, Any]:
    dry_run = body.dry_run if body else False
    report = await run_in_threadpool(_memory(request).maintain, dry_run=dry_run)
    return {
        "success": True,
        "dryRun": dry_run,
        "archived": report.archived,
        "summarized": report.summarized,
    }


@router.post(
    "/reindex",
    summary="Bring the search index up to date with the vault and the event log now",
    description="Waits until it is done, embedding too when the server has a model.",
    response_model=None,
    responses={200: {"description": "How many documents changed", "model": schemas.Reindexed}},
)
async def reindex(request: Request) -> dict[str, Any]:
    done = await run_in_threadpool(_memory(request).index_now)
    return {"success": True, "documents": done}


@router.post(
    "/jobs/run",
    summary="Run the pipeline's due jobs now (summaries, fragments, the graph), then answer",
    description=(
        "Sessions due by their threshold or idleness are queued first. The server's own "
        "worker keeps running beside it; a job is run once either way. `memvault worker "
        "--once` asks this of a running server."
    ),
    response_model=None,
    responses={200: {"description": "How many jobs ran", "model": schemas.JobsRun}},
)
async def run_jobs(request: Request) -> dict[str, Any]:
    memory = _memory(request)

    def run() -> int:
        memory.pipeline.signals()
        return memory.pipeline.worker.drain()

    return {"success": True, "jobsRun": await run_in_threadpool(run)}
