"""Answers of the session board's routes: rows, a row with its snapshot, an operation's
report and a recognised trigger."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from memvault.api.schemas.shape import OpenShape, Shape


class BoardRowView(Shape):
    sessionId: str
    agentName: str
    topic: str
    summary: str
    keywords: str
    status: str
    referencedBy: Annotated[str, Field(description="Comma-separated session ids, or a dash")]
    startedAt: str
    updatedAt: str


class BoardRows(Shape):
    sessions: list[BoardRowView]


class InjectedMemory(Shape):
    kind: str  # fragment | project | summary | observation
    id: str


class Injection(Shape):
    """One memory block the session's agent was given."""

    at: str
    sessionId: str
    answered: str | None  # the host event it answered: SessionStart, UserPromptSubmit…
    items: list[InjectedMemory]
    tokens: int | None


class BoardRowWithSnapshot(Shape):
    session: BoardRowView
    snapshot: str | None
    injections: list[Injection]  # what memory gave the agent, oldest first


class BoardReport(OpenShape):
    """What a board operation did; the other keys are the operation's details."""

    operation: str
    ok: bool
    sessionId: str | None
    message: str


class BoardRefusal(BoardReport):
    """A board operation refused or not completed: its report, and why."""

    ok: Literal[False]
    error: str


class TriggerView(Shape):
    operation: str
    sessionId: str | None
    phrase: str


class Triggered(Shape):
    trigger: TriggerView | None
