"""The search page (L0: each hit's score as relevance, importance and recency) and the
drill-down from a hit: the memory whole (L1) and its project's memory (L2)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from memvault.domain import DOCUMENT_KINDS
from memvault.errors import InvalidInput
from memvault.viewer.render import memory_of, obsidian, page

router = APIRouter(include_in_schema=False)
HITS = 20


@router.get("/search")
def search(
    request: Request,
    q: Annotated[str, Query(max_length=4000)] = "",
    kind: str = "",
    project: Annotated[str, Query(max_length=200)] = "",
    archived: bool = False,
) -> Response:
    memory = memory_of(request)
    hits, problem = [], None
    kinds = [kind] if kind in DOCUMENT_KINDS else None
    if q.strip():
        try:
            # A search passes over the sessions' bookkeeping (sessions starting and ending,
            # memvault's own records), as it does for agents: not what a person seeks.
            hits = memory.recall.search(
                q, limit=HITS, project=project or None, kinds=kinds, include_archived=archived
            )
        except InvalidInput as exc:
            problem = exc.message
    form = {"q": q, "kind": kind if kinds else "", "project": project, "archived": archived}
    return page(
        request,
        "search.html",
        title="Search",
        **form,  # shown back as given
        kinds=DOCUMENT_KINDS,
        hits=hits,
        problem=problem,
        weights=memory.recall.weights,
        public_id=memory.recall.public_id,
    )


@router.get("/memory/{memory_id:path}")
def memory_entry(request: Request, memory_id: str) -> Response:
    memory = memory_of(request)
    entry = memory.recall.get(memory_id, counted=False)
    if entry is None:
        return page(
            request, "missing.html", title="Memory", code=404, message=f"no memory {memory_id!r}"
        )
    project = entry.document.project
    others = (
        memory.recall.project_memory(project)
        if project and entry.document.kind == "fragment"
        else None
    )
    return page(
        request,
        "memory.html",
        title=entry.id,
        entry=entry,
        project_memory=others,
        public_id=memory.recall.public_id,
        obsidian=obsidian(memory, entry.document),
    )
