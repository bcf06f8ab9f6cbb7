"""Plain data types shared by every layer: events, observations, sessions, results."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(dt: datetime) -> str:
    """UTC ISO-8601 with milliseconds and a Z: sorts as text on every engine."""
    if dt.tzinfo is not UTC:
        dt = dt.astimezone(UTC)
    return dt.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def observation_id(event_seq: int) -> str:
    """Observations are one per event, so they are named by their event's sequence number."""
    return f"obs_{event_seq}"


_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def canonical_time(value: str) -> str | None:
    """A client timestamp in memvault's form (UTC, milliseconds, Z), or None if unreadable.

    JavaScript's ``toISOString()`` already produces this form, so most hook timestamps
    pass through untouched.
    """
    if len(value) == 24 and _CANONICAL.fullmatch(value):
        return value
    parsed = parse_timestamp(value)
    if parsed is None:
        return None
    try:
        return iso(parsed)
    except (OverflowError, ValueError):  # e.g. year 1 with a positive offset
        return None


def parse_timestamp(value: str) -> datetime | None:
    """Parse a client timestamp (ISO-8601, or epoch seconds/milliseconds); None if unreadable."""
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        pass
    else:
        seconds = number / 1000 if number > 1e11 else number
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


@dataclass(slots=True)
class ObservationDraft:
    """What ingest derives from one event before it is stored."""

    type: str
    title: str
    narrative: str
    facts: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    importance: int = 5


@dataclass(slots=True)
class NewEvent:
    """One validated, redacted event ready for the store, with its synthetic observation."""

    session_id: str
    client_event_id: str | None
    hook_type: str
    project: str
    cwd: str
    agent_id: str | None
    client_timestamp: str
    occurred_at: str
    received_at: str
    payload: str  # JSON text of the event's data, after redaction
    observation: ObservationDraft


@dataclass(slots=True)
class AppendResult:
    """The store's answer for one event: where it landed, or that it was already there."""

    session_id: str
    client_event_id: str | None
    event_seq: int
    observation_id: str
    deduplicated: bool


@dataclass(slots=True)
class AppendFailure:
    """An event the store could not write; the others in its batch are unaffected."""

    session_id: str
    client_event_id: str | None
    error: str


@dataclass(frozen=True, slots=True)
class Event:
    seq: int
    session_id: str
    client_event_id: str | None
    hook_type: str
    project: str
    cwd: str
    agent_id: str | None
    client_timestamp: str
    occurred_at: str
    received_at: str
    payload: Any


@dataclass(frozen=True, slots=True)
class Observation:
    id: str
    event_seq: int
    session_id: str
    client_event_id: str | None
    occurred_at: str
    hook_type: str
    type: str
    title: str
    narrative: str
    facts: list[str]
    files: list[str]
    concepts: list[str]
    importance: int
    derived_by: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class Watermark:
    """A (timestamp, sequence) cursor: a derived process has handled every event up to it."""

    at: str | None = None
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    project: str
    cwd: str
    agent_id: str | None
    title: str | None
    board_session_id: str | None
    created_at: str
    first_event_at: str | None
    last_event_at: str | None
    event_count: int
    observation_count: int
    summarized: Watermark
    extracted: Watermark
    reflected: Watermark
    graph_extracted: Watermark
    summary_revision: int
    summarized_observation_count: int
    last_sweep_attempt_at: str | None
    compressed: Watermark = Watermark()


@dataclass(frozen=True, slots=True)
class StoreStats:
    engine: str
    location: str
    size_bytes: int
    events: int
    observations: int
    sessions: int
    jobs_pending: int
    jobs_running: int
    jobs_failed: int
    schema_version: int


@dataclass(slots=True)
class BoardRow:
    """One row of the session board (``memory/index.md``); the file is the truth, the
    store keeps a mirror of these for queries."""

    session_id: str
    agent_name: str
    topic: str
    summary: str
    keywords: str
    status: str
    referenced_by: list[str] = field(default_factory=list)
    started_at: str = ""
    updated_at: str = ""

    def with_(self, **changes: object) -> BoardRow:
        return replace(self, **changes)


DOCUMENT_KINDS = ("fragment", "summary", "session", "observation")


@dataclass(frozen=True, slots=True)
class DocumentDraft:
    """What the search index keeps of one fragment, session summary or observation.

    ``terms`` is the analyzed text of (title, body, context, dates): the words that match.
    The context is text around the document (neighbouring events, tags, keywords) that helps
    it be found without being part of what it says; dates is its day in words.
    ``embed_text`` is what gets a vector.
    """

    kind: str
    key: str
    title: str
    summary: str
    body: str
    terms: tuple[str, str, str, str]
    embed_text: str
    importance: float
    updated_at: str
    content_hash: str
    project: str | None = None
    session_id: str | None = None
    path: str | None = None
    event_ids: tuple[str, ...] = ()
    archived: bool = False
    mtime: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Document:
    id: int
    kind: str
    key: str
    project: str | None
    session_id: str | None
    title: str
    summary: str
    body: str
    importance: float
    updated_at: str
    path: str | None
    event_ids: list[str]
    archived: bool
    meta: dict[str, Any]
    access_count: int
    last_accessed: str | None


@dataclass(frozen=True, slots=True)
class Job:
    """A unit of background work, as claimed by a worker."""

    id: int
    kind: str
    dedupe_key: str | None
    payload: dict[str, Any]
    attempts: int  # including this one
    run_after: str
    claimed_by: str | None
    claimed_until: str | None
