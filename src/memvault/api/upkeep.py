"""Routes for changing and keeping up memory under ``/agentmemory/``: editing and
deleting one fragment, the fragments whose cited files are all gone, maintenance (archive
unused fragments, L2 summaries), reindexing and running the pipeline's due jobs now.
``memvault fragments edit|delete``, ``maintain``, ``reindex``, ``worker --once`` and
``doctor`` use them when a server runs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from memvault import present
from memvault.api import schemas
from memvault.api.operation import Served, StrictBody, Supersedes, answer, examples, routes
from memvault.vault.edit import Edit

router = routes("/agentmemory", "memory")

FactLine = Annotated[str, Field(max_length=2000)]


class EditBody(BaseModel):  # a plain BaseModel: linters know its list defaults are copied
    model_config = StrictBody.model_config | examples(
        {"summary": "Loaders are named fetchX.", "addFacts": ["why: one prefix"]},
        {"removeFacts": ["why: one prefix"], "importance": 0.8, "addTags": ["naming"]},
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
    supersedes: Supersedes = None


class MaintainBody(StrictBody):
    model_config = examples({"dryRun": True})

    dry_run: Annotated[bool, Field(alias="dryRun")] = False


# A path no route takes (an id with a line break in it) is answered by the router itself.
_NO_ROUTE = {404: {"description": "No route for this path: an id with a control character in it"}}


@router.patch(
    "/fragments/{fragment_id:path}",
    summary="Change a fragment's summary, facts, importance or tags, or mark the one it "
    "supersedes; the rest of its file stays",
    **answer(
        "The fragment as edited, whole",
        schemas.OneMemory,
        {400: {"description": "No such fragment, or an edit that cannot be made"}},
        _NO_ROUTE,
        schemas.QUEUED,
    ),
)
async def edit(memory: Served, fragment_id: str, body: EditBody) -> dict[str, Any]:
    fields = dict(body)
    supersedes = fields.pop("supersedes")
    change = Edit(**fields)  # the body's other fields are the edit's
    entry = await run_in_threadpool(
        memory.fragments.edit_fragment, fragment_id, change, supersedes=supersedes
    )
    return {"memory": present.entry_view(memory, entry)}


@router.delete(
    "/fragments/{fragment_id:path}",
    summary="Delete a fragment's file and what memvault derived from it",
    description=(
        "The pipeline does not learn it again from the same events. With `dryRun=true` the "
        "id is only checked (400 when it names no fragment), which a client asks before a "
        "person confirms."
    ),
    **answer(
        "Deleted, or checked for a dry run",
        schemas.FragmentDeleted,
        {400: {"description": "No such fragment, or not a fragment"}},
        _NO_ROUTE,
        schemas.QUEUED,
    ),
)
async def delete(
    memory: Served,
    fragment_id: str,
    dry_run: Annotated[bool, Query(alias="dryRun")] = False,
) -> dict[str, Any]:
    if dry_run:
        path = await run_in_threadpool(memory.fragments.fragment_path, fragment_id)
        relative = path.relative_to(memory.settings.vault_path).as_posix()
        return {"success": True, "deleted": False, "id": fragment_id, "path": relative}
    return present.fragment_deleted(
        await run_in_threadpool(memory.fragments.delete_fragment, fragment_id)
    )


@router.get(
    "/stale-fragments",
    summary="Fragments every cited file of which is gone from their project's folder",
    description=(
        "A project's folder is the working folder of its latest session, when this machine "
        "sees it. Each is listed with the files gone; `memvault fragments delete ID` (or "
        "`POST /forget`) removes one that no longer holds."
    ),
    **answer("The fragments, by project", schemas.StaleFragments),
)
async def stale_fragments(memory: Served) -> dict[str, Any]:
    gone = await run_in_threadpool(memory.staleness.gone_fragments)
    return {"fragments": [present.gone_files(g) for g in gone]}


@router.post(
    "/maintain",
    summary="Archive unused low-importance fragments; write L2 summaries of large projects",
    **answer("What was (or would be) done", schemas.Maintained, schemas.QUEUED),
)
async def maintain(memory: Served, body: MaintainBody | None = None) -> dict[str, Any]:
    dry_run = body.dry_run if body else False
    report = await run_in_threadpool(memory.fragments.maintain, dry_run=dry_run)
    return present.maintained(report, dry_run=dry_run)


@router.post(
    "/reindex",
    summary="Bring the search index up to date with the vault and the event log now",
    description="Waits until it is done, embedding too when the server has a model.",
    **answer("How many documents changed", schemas.Reindexed),
)
async def reindex(memory: Served) -> dict[str, Any]:
    return {"success": True, "documents": await run_in_threadpool(memory.index.index_now)}


@router.post(
    "/jobs/run",
    summary="Run the pipeline's due jobs now (summaries, fragments, the graph), then answer",
    description=(
        "Sessions due by their threshold or idleness are queued first. The server's own "
        "worker keeps running beside it; a job is run once either way. `memvault worker "
        "--once` asks this of a running server."
    ),
    **answer("How many jobs ran", schemas.JobsRun),
)
async def run_jobs(memory: Served) -> dict[str, Any]:
    return {"success": True, "jobsRun": await run_in_threadpool(memory.serving.run_due_jobs)}
