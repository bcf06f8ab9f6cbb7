"""Retrieval routes under ``/agentmemory/``: search, the read layers, context, remember.

Shapes follow agentmemory's where it has the route (``search``, ``smart-search``,
``remember``, ``forget``, ``memories``, ``context``, ``enrich``); ``fragments/{id}`` (L1)
and ``projects/{name}/memory`` (L2) are memvault's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Query
from pydantic import ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from memvault import present
from memvault.api import schemas
from memvault.api.operation import (
    MAX_OFFSET,
    Body,
    Served,
    Supersedes,
    answer,
    examples,
    link,
    routes,
)
from memvault.api.responses import JSONResponse
from memvault.domain import DOCUMENT_KINDS
from memvault.errors import InvalidInput
from memvault.memory import Memory
from memvault.search.context import Packed
from memvault.search.ranking import RELEVANCE_ONLY
from memvault.vault.remember import Draft, facts_from

router = routes("/agentmemory", "memory")

Kind = Annotated[str, Field(pattern=f"^({'|'.join(DOCUMENT_KINDS)})$")]
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")


class SearchBody(Body):
    model_config = examples({"query": "flaky checkout test", "limit": 5, "project": "demo-app"})

    query: Annotated[str, Field(min_length=1, max_length=4000)]
    limit: Annotated[int, Field(ge=1, le=100)] = 10
    project: str | None = None
    kinds: Annotated[list[Kind] | None, Field(min_length=1)] = None
    include_archived: Annotated[bool, Field(alias="includeArchived")] = False
    ranking: Annotated[
        str,
        Field(
            pattern="^(default|relevance)$",
            description="`relevance` ignores importance and recency",
        ),
    ] = "default"


class SmartSearchBody(Body):
    model_config = examples(
        {"query": "payment mock retry", "limit": 5},
        {"expandIds": ["agent-memory/2026-11-30-payment-mock-retries.md"]},
    )

    query: Annotated[str | None, Field(max_length=4000)] = None
    expand_ids: Annotated[list[str] | None, Field(alias="expandIds", max_length=100)] = None
    limit: Annotated[int, Field(ge=1, le=100)] = 10
    project: str | None = None


_TEXT = {"type": "string", "pattern": r"\S"}


def _what_remember_requires(schema: dict[str, Any]) -> None:
    """What the fragment write path requires, said in the schema (for clients, and so
    generated requests reach it): a project, and content, or a summary and facts."""
    schema["required"] = ["project"]
    schema["examples"] = [
        {
            "project": "demo-app",
            "summary": "The checkout test was flaky because the payment mock retried.",
            "facts": ["payment mock: retries removed", "checkout test: passes 50 runs"],
            "tags": ["testing"],
            "importance": 0.7,
        },
        {"project": "demo-app", "content": "Run `npm test -- --runInBand` on CI machines."},
    ]
    schema["anyOf"] = [
        {"required": ["content"], "properties": {"content": _TEXT}},
        {
            "required": ["summary", "facts"],
            "properties": {"summary": _TEXT, "facts": {"type": "array", "contains": _TEXT}},
        },
    ]


class RememberBody(Body):
    model_config = ConfigDict(json_schema_extra=_what_remember_requires)

    content: Annotated[str | None, Field(max_length=20_000)] = None
    summary: Annotated[str | None, Field(max_length=1000)] = None
    facts: Annotated[list[str] | None, Field(max_length=200)] = None
    project: Annotated[str | None, Field(max_length=200)] = None
    importance: Annotated[float, Field(ge=0, le=1)] = 0.5
    confidence: Annotated[float | None, Field(ge=0, le=1)] = None
    source: str | None = None
    tags: list[str] | None = None
    type: Annotated[str | None, Field(description="Kept as a tag (fragments have no type)")] = None
    concepts: list[str] | None = None
    files: list[str] | None = None
    event_ids: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=256)]] | None,
        Field(alias="eventIds", max_length=100, description="Events it was learned from"),
    ] = None
    supersedes: Supersedes = None


class ForgetBody(Body):
    model_config = examples({"memoryId": "agent-memory/2026-11-30-payment-mock-retries.md"})

    memory_id: Annotated[str | None, Field(alias="memoryId")] = None
    session_id: Annotated[str | None, Field(alias="sessionId")] = None
    observation_ids: Annotated[list[str] | None, Field(alias="observationIds")] = None


_SESSION = (
    "The session asking: its own prompt, observations and board row are left out, and so is "
    "what an earlier block of it gave; what this block gives is recorded in the session"
)
_HOOK_EVENT = "The host event the block answers (UserPromptSubmit, PreToolUse…), recorded with it"


class ContextBody(Body):
    model_config = examples(
        {"project": "demo-app", "query": "checkout test", "budget": 2000},
        {
            "project": "demo-app",
            "query": "why does login fail",
            "sessionId": "c0ffee",
            "hookEvent": "UserPromptSubmit",
        },
    )

    project: str | None = None
    session_id: Annotated[str | None, Field(alias="sessionId", description=_SESSION)] = None
    hook_event: Annotated[
        str | None, Field(alias="hookEvent", max_length=64, description=_HOOK_EVENT)
    ] = None
    query: Annotated[str | None, Field(max_length=4000)] = None
    budget: Annotated[int | None, Field(ge=50, le=50_000)] = None


class EnrichBody(Body):
    model_config = examples(
        {"files": ["src/checkout/payment.ts"], "project": "demo-app", "toolName": "Edit"}
    )

    files: Annotated[list[str], Field(min_length=1, max_length=100)]
    terms: list[str] | None = None
    project: str | None = None
    session_id: Annotated[str | None, Field(alias="sessionId", description=_SESSION)] = None
    tool_name: Annotated[str | None, Field(alias="toolName")] = None
    hook_event: Annotated[
        str | None, Field(alias="hookEvent", max_length=64, description=_HOOK_EVENT)
    ] = None


_NOT_FOUND = answer(
    "The memory, whole", schemas.OneMemory, {404: {"description": "No such memory"}}
)
# What can be done with a fragment, from the answer that wrote it.
_ID = "$response.body#/memory/id"
_FRAGMENT_LINKS = {
    "memory": link("get", "/agentmemory/memories/{memory_id}", parameters={"memory_id": _ID}),
    "fragment": link(
        "get", "/agentmemory/fragments/{fragment_id}", parameters={"fragment_id": _ID}
    ),
    "forget": link("post", "/agentmemory/forget", request_body={"memoryId": _ID}),
}


@router.post(
    "/search",
    summary="Search all memory (L0): fragments, summaries, observations",
    **answer("The hits, best first", schemas.SearchResults),
)
async def search(memory: Served, body: SearchBody) -> dict[str, Any]:
    hits = await run_in_threadpool(
        memory.recall.search,
        body.query,
        limit=body.limit,
        project=body.project,
        kinds=body.kinds,
        include_archived=body.include_archived,
        weights=RELEVANCE_ONLY if body.ranking == "relevance" else None,
    )
    return {"query": body.query, **present.hits(memory, hits)}


@router.post(
    "/smart-search",
    summary="Compact results for a query, or expand ids to L1",
    **answer(
        "Compact hits for a query, or the memories whole for expandIds",
        schemas.CompactResults | schemas.ExpandedResults,
    ),
)
async def smart_search(memory: Served, body: SmartSearchBody) -> dict[str, Any]:
    if body.expand_ids:
        entries = [await run_in_threadpool(memory.recall.get, i) for i in body.expand_ids]
        found = [present.entry_view(memory, e) for e in entries if e is not None]
        return {"mode": "expanded", "results": found, "truncated": False}
    if not body.query or not body.query.strip():
        raise InvalidInput("give a query, or expandIds to read", fields=["query"])
    hits = await run_in_threadpool(
        memory.recall.search, body.query, limit=body.limit, project=body.project
    )
    return {"mode": "compact", **present.hits(memory, hits)}


_WRITTEN = {"model": schemas.Remembered, "links": _FRAGMENT_LINKS}


@router.post(
    "/remember",
    status_code=201,
    summary="Write a fragment (merged into a near-duplicate)",
    responses={
        201: {"description": "A new fragment", **_WRITTEN},
        200: {"description": "Merged into a near-duplicate", **_WRITTEN},
        **schemas.QUEUED,
    },
)
async def remember(memory: Served, body: RememberBody) -> JSONResponse:
    facts = list(body.facts or []) + (facts_from(body.content) if body.content else [])
    summary = (body.summary or "").strip() or _first_sentence(body.content or "")
    tags = list(body.tags or []) + list(body.concepts or [])
    if body.type:
        tags.append(body.type)
    if body.files:
        facts += [f"file: {path}" for path in body.files]
    draft = Draft(
        project=(body.project or "").strip(),
        summary=summary,
        facts=facts,
        importance=body.importance,
        confidence=body.confidence,
        source=body.source,
        tags=list(dict.fromkeys(tags)),
        properties={"events": list(dict.fromkeys(body.event_ids))} if body.event_ids else {},
    )
    result = await run_in_threadpool(memory.fragments.remember, draft, supersedes=body.supersedes)
    written = present.remembered(memory, result)
    if body.supersedes and written.get("memory", {}).get("id") != body.supersedes:
        written["supersedes"] = body.supersedes
    return JSONResponse(written, status_code=201 if result.action == "created" else 200)


@router.post(
    "/forget",
    summary="Delete a fragment",
    **answer("Deleted", schemas.Forgotten, schemas.QUEUED),
)
async def forget(memory: Served, body: ForgetBody) -> dict[str, Any]:
    if body.observation_ids or body.session_id:
        raise InvalidInput(
            "observations and sessions come from the immutable event log and cannot be "
            "forgotten; give memoryId (a fragment)",
            fields=["observationIds"],
        )
    if not body.memory_id:
        raise InvalidInput("memoryId is required", fields=["memoryId"])
    document = await run_in_threadpool(memory.fragments.forget, body.memory_id)
    return {"success": True, "forgotten": memory.recall.public_id(document), "path": document.path}


@router.get(
    "/memories",
    summary="Fragments, most recently updated first",
    **answer("A page of fragments", schemas.Memories),
)
def memories(
    memory: Served,
    project: str | None = None,
    include_archived: Annotated[bool, Query(alias="includeArchived")] = False,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> dict[str, Any]:
    found = memory.fragments.memories(
        project=project, include_archived=include_archived, limit=limit, offset=offset
    )
    return present.memories_page(memory, found, offset=offset, limit=limit)


def _entry(memory: Memory, memory_id: str, kinds: tuple[str, ...]) -> JSONResponse:
    entry = memory.recall.get(memory_id)
    if entry is None or entry.document.kind not in kinds:
        return JSONResponse({"error": f"no memory {memory_id!r}"}, status_code=404)
    return JSONResponse({"memory": present.entry_view(memory, entry)})


@router.get("/memories/{memory_id:path}", summary="One memory whole (L1), any kind", **_NOT_FOUND)
def memory_entry(memory: Served, memory_id: str) -> JSONResponse:
    return _entry(memory, memory_id, DOCUMENT_KINDS)


@router.get("/fragments/{fragment_id:path}", summary="One fragment whole (L1)", **_NOT_FOUND)
def fragment(memory: Served, fragment_id: str) -> JSONResponse:
    return _entry(memory, fragment_id, ("fragment",))


@router.get(
    "/projects/{project}/memory",
    summary="A project's memory (L2)",
    **answer("Its summary and fragments", schemas.ProjectMemory),
)
def project_memory(
    memory: Served, project: str, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> dict[str, Any]:
    return present.project_memory(memory, memory.recall.project_memory(project, limit=limit))


@router.post(
    "/context",
    summary="The memory block to inject for a project (and query)",
    description=(
        "Fragments, session summaries and activity that pass the relevance floor for the "
        "query (without one, the project's standing memory). With `sessionId`, only what the "
        "session was not given before: `context` is empty when nothing is new."
    ),
    **answer("The block and what it holds", schemas.Context),
)
async def context(memory: Served, body: ContextBody) -> dict[str, Any]:
    packed = await _block(memory.context.context, body, query=body.query, budget=body.budget)
    return present.context_block(packed)


@router.post(
    "/enrich",
    summary="Memory about files an agent is about to touch",
    **answer("The block about the files", schemas.Enriched),
)
async def enrich(memory: Served, body: EnrichBody) -> dict[str, Any]:
    packed = await _block(memory.context.enrich, body, files=body.files, terms=body.terms)
    return present.enriched(packed)


async def _block(
    pack: Callable[..., Packed], body: ContextBody | EnrichBody, **what: Any
) -> Packed:
    """A memory block for the session asking, answering its host event."""
    return await run_in_threadpool(
        pack, project=body.project, session_id=body.session_id, answering=body.hook_event, **what
    )


def _first_sentence(text: str) -> str:
    for line in text.strip().splitlines():
        line = line.strip().lstrip("-* ").strip()
        if line:
            return _SENTENCE.split(line, maxsplit=1)[0][:300]
    return ""
