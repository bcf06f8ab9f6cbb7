"""The board page: the rows of ``memory/index.md`` as the file has them now, filtered by
status, and one row with its snapshot rendered."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from memvault.vault.board import BoardFormatError
from memvault.vault.snapshot import METADATA_FIELDS, SECTIONS
from memvault.viewer.render import memory_of, page, path_part

router = APIRouter(include_in_schema=False)
STATUSES = ("active", "stale", "idle")
# Rows per <tbody>: the unit the browser lays out when scrolled to (viewer.css sizes it).
ROWS_PER_BODY = 20


@router.get("/")
def board(request: Request, status: str | None = None) -> Response:
    memory = memory_of(request)
    problem = None
    try:
        rows = memory.board.rows()
    except BoardFormatError as exc:  # a board edited into a shape memvault will not read
        rows, problem = [], str(exc)
    counts = {s: sum(1 for r in rows if r.status == s) for s in STATUSES}
    chosen = status if status in STATUSES else None
    shown = [r for r in rows if chosen is None or r.status == chosen]
    on_board = {r.session_id for r in rows}
    return page(
        request,
        "board.html",
        title="Board",
        live="board",
        rows=shown,
        rows_per_body=ROWS_PER_BODY,
        total=len(rows),
        counts=counts,
        chosen=chosen,
        statuses=STATUSES,
        on_board=on_board,
        problem=problem,
    )


@router.get("/board/{session_id}")
def board_row(request: Request, session_id: str) -> Response:
    memory = memory_of(request)
    try:
        entry = memory.board.entry(session_id)
        on_board = {r.session_id for r in memory.board.rows()}
    except BoardFormatError as exc:
        return page(request, "missing.html", title="Board", code=409, message=str(exc))
    if entry is None:
        archived, host_session = memory.board.departed(session_id)
        went = (
            f"it was archived to memory/archive/{session_id}/"
            if archived
            else "organize removes idle rows, and a sync or a hand edit may have taken it off"
        )
        links = [("/board", "the board")]
        if host_session is not None:
            links.insert(0, (f"/sessions/{path_part(host_session)}", "its session's events"))
        return page(
            request,
            "missing.html",
            title="Board",
            code=404,
            message=f"{session_id} is not on the board: {went}.",
            links=links,
        )
    return page(
        request,
        "board_row.html",
        title=session_id,
        live="board",
        entry=entry,
        on_board=on_board,
        sections=SECTIONS,
        metadata_fields=METADATA_FIELDS,
    )
