"""The session board tools: list, register, update, continue, release, archive, organize.

Each is a plain function over ``Memory`` (see ``memory_tools``). The descriptions name the
trigger phrases a user types for each operation, in Chinese and English, so the model
maps ``整理 memory`` to ``memory_organize`` and ``更新 memory session`` to
``memory_session_update``. An operation that is refused or cannot be completed is a tool
error whose text says why; the files are then as they were.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from memvault import present
from memvault.mcp_server.answers import answer, report_answer
from memvault.memory import Memory
from memvault.vault.board import format_references
from memvault.vault.snapshot import SECTIONS, Snapshot, as_snapshot

SessionId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="A Memory Session ID, e.g. 2026-11-30-1015-cursor-main-agent",
    ),
]
AgentName = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=80,
        description="The agent's name on the board, e.g. cursor-main-agent or "
        "claude-code-main-agent (never a task name); the configured default when omitted",
    ),
]
SnapshotText = Annotated[
    str | None,
    Field(
        max_length=50_000,
        description="Snapshot content as markdown: any of the template's sections "
        "(## Current Context, ## Decisions, …) as headings with list items",
    ),
]
Sections = Annotated[
    dict[str, str | list[str]] | None,
    Field(
        description="Snapshot content as section name → text or list of items, instead of "
        f"markdown. Sections: {', '.join(SECTIONS)}. Mark an item that no longer holds with "
        "[superseded], [resolved] or [done]"
    ),
]
Topic = Annotated[str | None, Field(max_length=200, description="What the session is about")]
Summary = Annotated[str | None, Field(max_length=1000, description="One or two sentences")]
Keywords = Annotated[str | None, Field(max_length=500, description="Comma-separated")]


def memory_sessions(
    memory: Memory,
    status: Annotated[
        Literal["active", "stale", "idle"] | None,
        Field(description="Only rows with this status"),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=200, description="How many rows")] = 30,
) -> CallToolResult:
    """The session board (memory/index.md), in reading priority: active and stale rows with
    a meaningful topic first, idle rows nobody described yet last. Read a row's snapshot
    with memory_get(session id) only when the row is not enough."""
    rows = memory.board.rows()
    if status is not None:
        rows = [row for row in rows if row.status == status]
    shown = rows[:limit]
    data = {"sessions": [present.board_row(row) for row in shown], "total": len(rows)}
    lines = [f"{len(rows)} session(s) on the board" + (f" with status {status}" if status else "")]
    for row in shown:
        lines.append(f"- {row.session_id} · {row.status} · {row.topic} · updated {row.updated_at}")
        referenced = f" (referenced by {format_references(row.referenced_by)})"
        lines.append(f"  {row.summary}{referenced if row.referenced_by else ''}")
    return answer(data, "\n".join(lines))


def memory_session_register(
    memory: Memory,
    topic: Topic = None,
    summary: Summary = None,
    keywords: Keywords = None,
    snapshot: SnapshotText = None,
    sections: Sections = None,
    manual: Annotated[
        bool,
        Field(
            description="true: an active row with a snapshot of the content (a manual "
            "registration); false: an idle row without a snapshot, as a host's session start"
        ),
    ] = True,
    agent_name: AgentName = None,
) -> CallToolResult:
    """Register a new session on the board and get its Memory Session ID. Trigger phrases:
    `註冊 memory session`, `補註冊 memory`, `手動註冊 memory`, "register memory session".
    Never reuses an existing row: a manual registration adds an active row with a snapshot,
    its topic and summary inferred from the content when not given. Report the ID to the
    user as the answer states it: `Your Memory Session ID is: <id>`."""
    content = _content(snapshot, sections)
    if content is not None and not manual:
        raise ToolError("snapshot content needs a manual registration (manual: true)")
    row = _row_words(topic, summary, keywords)
    report = memory.board.register_session(agent=agent_name, manual=manual, content=content, **row)
    return report_answer(report)


def memory_session_update(
    memory: Memory,
    session_id: SessionId,
    snapshot: SnapshotText = None,
    sections: Sections = None,
    topic: Topic = None,
    summary: Summary = None,
    keywords: Keywords = None,
) -> CallToolResult:
    """Update a session: merge new content into its snapshot and update its board row.
    Trigger phrases: `狀態更新`, `memory session 狀態更新`, `更新 memory session`,
    `更新 memory 狀態`, `整理這個 session`, "update memory session". The merge never drops
    an old item: give what is new or changed, and mark items that no longer hold with
    [superseded], [resolved] or [done] (in front of the item or at its end). The row
    becomes active; its Summary follows the snapshot's Current Context while memvault wrote
    it (a Summary a person edited, or one given, is kept); Started At and Referenced By are
    kept. Write at the end of a task, or when the user asks."""
    row = _row_words(topic, summary, keywords)
    report = memory.board.update_session(session_id, _content(snapshot, sections), **row)
    return report_answer(report)


def memory_session_continue(
    memory: Memory,
    source: Annotated[
        str,
        Field(min_length=1, max_length=200, description="The Memory Session ID to continue"),
    ],
    current: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=200,
            description="This session's Memory Session ID; omit to register one first",
        ),
    ] = None,
    agent_name: AgentName = None,
) -> CallToolResult:
    """Continue work from an earlier session. Trigger phrases: `接續 memory <id>`,
    `接續 memory session <id>`, `引用 memory <id>`, `沿用 memory <id>`, "continue memory
    <id>". Adds the source to this session's Continues From and this session to the
    source's Referenced By; the source's other fields are not changed. Without a current
    session ID, one is registered first (and reported)."""
    report = memory.board.continue_session(current, source, agent=agent_name)
    return report_answer(report)


def memory_session_release(
    memory: Memory,
    current: Annotated[
        str, Field(min_length=1, max_length=200, description="The session that continued")
    ],
    source: Annotated[
        str, Field(min_length=1, max_length=200, description="The session it continued")
    ],
) -> CallToolResult:
    """Release a continuation made by memory_session_continue. Trigger phrases:
    `解除引用 memory <id>`, `解除 memory 引用 <id>`, "release memory reference <id>" (the
    id is the source). Removes this session from the source's Referenced By and the source
    from this session's Continues From."""
    return report_answer(memory.board.release_session(current, source))


def memory_session_archive(
    memory: Memory,
    session_id: SessionId,
    force: Annotated[
        bool, Field(description="Archive even while other sessions reference it")
    ] = False,
) -> CallToolResult:
    """Archive one finished session. Trigger phrases: `封存 memory session <id>`, "archive
    memory session <id>". Moves its snapshot to memory/archive/<id>/ and takes its row off
    the board; a session that other sessions still reference is refused (release them
    first, or force). An idle row without a snapshot is deleted instead."""
    return report_answer(memory.board.archive_session(session_id, force=force))


def memory_organize(
    memory: Memory,
    dry_run: Annotated[bool, Field(description="Report what would change; change nothing")] = False,
    stale_days: Annotated[
        int | None,
        Field(ge=1, le=3650, description="Days without update before active becomes stale"),
    ] = None,
) -> CallToolResult:
    """Organize the session board. Trigger phrases: `整理 memory`, `清理 memory`, "organize
    memory", "clean up memory". Deletes idle rows nobody references, marks active rows
    stale when not updated for a while (14 days by default) and not referenced, and never
    archives. Reports what it deleted, marked stale, kept active, and protected because
    another session references it."""
    return report_answer(memory.board.organize(dry_run=dry_run, stale_days=stale_days))


def _content(snapshot: str | None, sections: dict[str, str | list[str]] | None) -> Snapshot | None:
    if snapshot is not None and sections is not None:
        raise ToolError("give either snapshot or sections, not both")
    if snapshot is None and sections is None:
        return None
    try:
        return as_snapshot(snapshot if snapshot is not None else sections)
    except ValueError as exc:  # an unknown section name
        raise ToolError(str(exc)) from None


def _row_words(
    topic: str | None, summary: str | None, keywords: str | None
) -> dict[str, str | None]:
    """The words of a board row a caller may give; None leaves memvault's own."""
    return {"topic": topic, "summary": summary, "keywords": keywords}
