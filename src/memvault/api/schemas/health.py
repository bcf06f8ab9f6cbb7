"""Answers of the liveness and health routes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from memvault.api.schemas.shape import Count, Shape


class Live(Shape):
    status: Literal["ok"]
    service: Literal["memvault"]
    version: str


class ServerIdentity(Shape):
    service: Literal["memvault"]
    version: str
    pid: Annotated[int, Field(description="The server's process id")]
    url: Annotated[str, Field(description="Where clients reach it, as its settings say")]
    home: Annotated[str, Field(description="Its MEMVAULT_HOME, as an absolute path")]
    vault: Annotated[str, Field(description="The vault it writes, as an absolute path")]
    vaultName: Annotated[str, Field(description="The vault's name in Obsidian (its folder's)")]
    startedBy: Annotated[
        str | None,
        Field(description="What started it in the background (an MCP relay); null: a person"),
    ]


class Pool(Shape):
    size: Annotated[Count, Field(description="Connections open now")]
    max: Count
    inUse: Annotated[Count, Field(description="Connections lent out now")]
    waiting: Annotated[Count, Field(description="Requests waiting for a connection")]


class StoreFigures(Shape):
    engine: str
    location: str
    sizeBytes: Count
    schemaVersion: int
    events: Count
    observations: Count
    sessions: Count
    pool: Annotated[Pool | None, Field(description="PostgreSQL's connection pool; null on SQLite")]


class Queue(Shape):
    pendingWrites: Annotated[
        Count,
        Field(
            description="Requests' writes queued, not yet committed (background threads' "
            "writes queue apart: their backlog is index.eventsNotIndexed and the job counts)"
        ),
    ]
    jobsPending: Count
    jobsRunning: Count
    jobsFailed: Count
    spooledEvents: Annotated[Count, Field(description="Kept by hooks, not taken in yet")]
    spooledSetAside: Annotated[
        Count,
        Field(
            description="Spooled files the server could not take in (unreadable, refused as "
            "bad input): kept apart in spoolSetAsideFolder, their events not stored"
        ),
    ]
    spoolSetAsideFolder: str


class ProcessFigures(Shape):
    pid: int
    rssBytes: int | None


class SyncConflict(Shape):
    path: Annotated[str, Field(description="The copy a sync folder left, in the vault")]
    copyOf: Annotated[str, Field(description="The file it is a copy of")]
    whatToDo: str


class VaultFigures(Shape):
    path: str
    fragmentsFolder: str
    boardRows: Count
    fragments: Count
    archivedFragments: Count
    syncConflicts: Annotated[
        list[SyncConflict],
        Field(description="Conflict copies of the board or a snapshot waiting in the vault"),
    ]


class Embedder(Shape):
    provider: str
    model: str | None
    dimension: Annotated[int | None, Field(description="Known once the model has answered")]
    loaded: bool
    reason: str | None


class LLM(Shape):
    provider: str
    model: str | None
    reason: str | None


class IndexBacklog(Shape):
    lastEventSeq: int
    indexedThroughSeq: int
    eventsNotIndexed: Count
    changesNotIndexed: Annotated[
        Count,
        Field(
            description="Observations rewritten in place (an LLM's compression, a purge, an "
            "upgrade) that the index has not read again yet"
        ),
    ]
    documentsNotEmbedded: Annotated[Count | None, Field(description="null without an embedder")]
    caughtUp: bool
    indexer: Annotated[
        bool,
        Field(
            description="Whether this replica indexes the event log and embeds documents: "
            "on PostgreSQL the vault's owner does, and the other replicas follow its writes"
        ),
    ]


class Replication(Shape):
    role: Literal["vault owner", "standby"]
    vaultOwner: Annotated[
        bool, Field(description="Whether this replica writes the vault (on SQLite, always)")
    ]
    since: Annotated[str | None, Field(description="When this replica took its role")]
    vaultWritesQueued: Annotated[
        Count, Field(description="Board and fragment writes queued, not applied by the owner yet")
    ]


class PurgeRecord(Shape):
    at: str
    places: Count
    rows: Count
    matches: Count


class Privacy(Shape):
    privateProjects: Annotated[
        list[str],
        Field(description="Folders a .memvaultignore makes private: their hooks record nothing"),
    ]
    purges: Annotated[Count, Field(description="Purges done (`memvault purge`)")]
    lastPurge: Annotated[
        PurgeRecord | None,
        Field(description="When the latest purge ran and how much it replaced, never the text"),
    ]


class DaySpent(Shape):
    day: str
    tokens: Count
    blocks: Count


class ProjectSpent(Shape):
    project: str
    tokens: Count
    blocks: Count


class SessionSpent(Shape):
    sessionId: str
    tokens: Count
    blocks: Count


class Injected(Shape):
    """Tokens memory blocks gave agents over the last days."""

    days: int
    capPerBlock: Annotated[
        int, Field(description="The tokens one block may take (MEMVAULT_CONTEXT_TOKENS)")
    ]
    tokens: Count
    blocks: Count
    today: Annotated[Count, Field(description="Tokens given today (UTC)")]
    perBlock: float
    perDay: Annotated[list[DaySpent], Field(description="Every day of the window, oldest first")]
    perProject: Annotated[list[ProjectSpent], Field(description="Most tokens first")]
    perSession: Annotated[
        list[SessionSpent], Field(description="The sessions given the most tokens")
    ]


class Health(Shape):
    status: Literal["ok", "degraded", "critical"]
    reasons: Annotated[list[str], Field(description="Why the status is not ok")]
    service: Literal["memvault"]
    version: str
    uptimeSeconds: float
    store: StoreFigures
    queue: Queue
    process: ProcessFigures
    vault: VaultFigures
    embedder: Embedder | None
    llm: LLM | None
    index: IndexBacklog | None
    replication: Replication
    privacy: Privacy
    injected: Injected | None
