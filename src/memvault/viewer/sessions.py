"""The sessions pages: host sessions, the latest to receive an event first, and one session's
timeline (its events and observations in arrival order, a page at a time by sequence)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from memvault.viewer.render import memory_of, page

router = APIRouter(include_in_schema=False)
SESSIONS_PAGE = 100
TIMELINE_PAGE = 100  # events a page shows unless asked: its HTML stays under 100 KB


@router.get("/sessions")
def sessions(
    request: Request, page_number: Annotated[int, Query(alias="page", ge=1)] = 1
) -> Response:
    memory = memory_of(request)
    found = memory.reads.sessions(limit=SESSIONS_PAGE + 1, offset=(page_number - 1) * SESSIONS_PAGE)
    on_board = {row.session_id for row in memory.board.mirrored()}
    return page(
        request,
        "sessions.html",
        title="Sessions",
        live="events",
        sessions=found[:SESSIONS_PAGE],
        page_number=page_number,
        more=len(found) > SESSIONS_PAGE,
        on_board=on_board,
    )


@router.get("/sessions/{session_id:path}")
def timeline(
    request: Request,
    session_id: str,
    after: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = TIMELINE_PAGE,
) -> Response:
    memory = memory_of(request)
    found = memory.reads.timeline(session_id, after=after, limit=limit)
    if found is None:
        return page(
            request,
            "missing.html",
            title="Session",
            code=404,
            message=f"no session {session_id!r}",
        )
    # Only the last page changes as events arrive: it alone reloads itself.
    live = f"session:{found.session.id}" if found.next_after is None else ""
    return page(request, "timeline.html", title=found.session.id, live=live, t=found, limit=limit)
