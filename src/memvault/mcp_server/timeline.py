"""The timeline tool: what happened lately in a session or a project, in order.

A plain function over ``Memory``, like the other tools: ``Memory.latest`` reads the captured
observations (never the search index, so what a hook sent a moment ago is there); the tool
says them.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from memvault import present
from memvault.domain import Observation, Session
from memvault.mcp_server.answers import NotFound, answer
from memvault.memory import Memory
from memvault.vault.board import Board

NARRATIVE_SHOWN = 160


def memory_timeline(
    memory: Memory,
    session_id: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=256,
            description="A host session id or a Memory Session ID (give this or project)",
        ),
    ] = None,
    project: Annotated[
        str | None,
        Field(min_length=1, max_length=200, description="A project (give this or session_id)"),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100, description="How many observations")] = 20,
) -> CallToolResult:
    """What happened lately, in order: a session's or a project's most recent captured
    observations, oldest first, with each session's summary. Use it to pick up where a
    session left off."""
    if (session_id is None) == (project is None):
        raise ToolError("give session_id or project (one of them)")
    found = memory.reads.latest(session_id=session_id, project=project, limit=limit)
    if found is None:
        raise NotFound(
            f"no session {session_id!r}; give a host session id or a Memory Session ID "
            "from memory_sessions"
        )
    board, observations, earlier = found.board, found.observations, found.earlier
    headers = [
        _session_header(memory, board, session, board_id) for session, board_id in found.sessions
    ]
    data = {
        "sessionId": session_id,
        "project": project,
        "sessions": headers,
        "observations": [present.observation(o) for o in observations],
        "truncated": earlier,
    }
    return answer(data, _timeline_text(headers, observations, earlier, many=project is not None))


def _session_header(
    memory: Memory, board: Board, session: Session | None, board_id: str | None
) -> dict[str, Any]:
    row = board.get(board_id) if board_id else None
    summary = memory.reads.session_summary(session.id) if session is not None else None
    return {
        "id": session.id if session is not None else None,
        "memorySessionId": board_id,
        "project": session.project if session is not None else None,
        "lastEventAt": session.last_event_at if session is not None else None,
        "observationCount": session.observation_count if session is not None else 0,
        "board": present.board_row(row) if row is not None else None,
        "topic": (summary or {}).get("topic") or (row.topic if row else None),
        "summary": (summary or {}).get("current_context") or (row.summary if row else None),
    }


def _timeline_text(
    headers: list[dict[str, Any]], observations: list[Observation], earlier: bool, *, many: bool
) -> str:
    lines = []
    for header in headers:
        name = header["memorySessionId"] or header["id"]
        lines.append(f"session {name}: {header['topic'] or '(no topic yet)'}")
        if header["summary"]:
            lines.append(f"  {header['summary']}")
    if not observations:
        lines.append("no observations captured")
    elif earlier:
        lines.append(f"the last {len(observations)} observations, oldest first:")
    by_board = {h["id"]: h["memorySessionId"] or h["id"] for h in headers}
    for o in observations:
        where = f" · {by_board.get(o.session_id, o.session_id)}" if many else ""
        narrative = o.narrative.replace("\n", " ")
        if len(narrative) > NARRATIVE_SHOWN:
            narrative = narrative[: NARRATIVE_SHOWN - 1] + "…"
        lines.append(f"{o.occurred_at} [{o.type}] {o.id}{where}: {o.title}")
        if narrative and narrative != o.title:
            lines.append(f"  {narrative}")
    return "\n".join(lines)
