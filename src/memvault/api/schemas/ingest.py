"""Answers of the ingest and session routes: an event stored, a bulk of them, sessions and
their observations."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from memvault.api.schemas.shape import Count, Shape


class Stored(Shape):
    """A new event."""

    observationId: str
    eventSeq: int


class Deduplicated(Shape):
    """An event whose ``(sessionId, eventId)`` was already stored: the original's ids."""

    deduplicated: Literal[True]
    sessionId: str
    eventId: str | None
    observationId: str


Observed = Annotated[Stored | Deduplicated, Field(title="Observed")]


class ItemFailure(Shape):
    index: int
    eventId: str | None
    error: str


class BulkObserved(Shape):
    success: Literal[True]
    total: Count
    imported: Count
    deduplicated: Count
    failed: Count
    errors: list[ItemFailure]
    results: Annotated[list[Observed | None], Field(description="null for a failed item")]


class Cursor(Shape):
    at: str | None
    seq: int | None


class Watermarks(Shape):
    summarized: Cursor | None
    extracted: Cursor | None
    reflected: Cursor | None
    graphExtracted: Cursor | None


class SessionView(Shape):
    id: str
    project: str
    cwd: str
    agentId: str | None
    title: str | None
    memorySessionId: Annotated[str | None, Field(description="Its board row's id")]
    status: Annotated[Literal["active"], Field(description="memvault never closes a session")]
    startedAt: str
    createdAt: str
    lastEventAt: str | None
    eventCount: Count
    observationCount: Count
    summaryRevision: Count
    summarizedObservationCount: Count
    watermarks: Watermarks
    lastSweepAttemptAt: str | None


class SessionStarted(Shape):
    session: SessionView
    memorySessionId: Annotated[str | None, Field(description="null when the board was not written")]
    context: Annotated[str, Field(description="The Memory Session ID line and the memory block")]


class SummaryQueued(Shape):
    success: Literal[True]
    queued: Annotated[bool, Field(description="false when a summary was already queued")]
    sessionId: str


class Noop(Shape):
    success: Literal[True]
    noop: Literal[True]


class Sessions(Shape):
    sessions: list[SessionView]


class ObservationView(Shape):
    id: str
    sessionId: str
    eventId: str | None
    eventSeq: int
    timestamp: str
    hookType: str
    type: str
    title: str
    narrative: str
    facts: list[str]
    files: list[str]
    concepts: list[str]
    importance: int
    derivedBy: str
    updatedAt: str


class Observations(Shape):
    observations: list[ObservationView]
