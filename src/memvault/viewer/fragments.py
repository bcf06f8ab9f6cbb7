"""The fragments page: memory fragments by project, with importance, how often and when
each was read, whether it is archived, and a link that opens its file in Obsidian; first,
the fragments every cited file of which is gone from the project's folder."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from memvault.domain import Document
from memvault.viewer.render import memory_of, obsidian, page

router = APIRouter(include_in_schema=False)
FRAGMENTS_SHOWN = 500


@router.get("/fragments")
def fragments(
    request: Request,
    project: Annotated[str, Query(max_length=200)] = "",
    archived: bool = False,
) -> Response:
    memory = memory_of(request)
    found = memory.fragments.memories(
        project=project or None, include_archived=archived, limit=FRAGMENTS_SHOWN
    )
    by_project: dict[str, list[Document]] = {}
    for document in sorted(found, key=lambda d: (d.project or "", -d.importance, d.key)):
        by_project.setdefault(document.project or "(no project)", []).append(document)
    return page(
        request,
        "fragments.html",
        title="Fragments",
        live="events",
        by_project=by_project,
        project=project,
        archived=archived,
        shown=len(found),
        limit=FRAGMENTS_SHOWN,
        public_id=memory.recall.public_id,
        obsidian=lambda d: obsidian(memory, d),
        gone=memory.staleness.gone_fragments() if not archived else [],
    )
