"""What the REST routes answer, as pydantic models for the OpenAPI document.

The routes build their answers as plain dicts (``views``, ``to_dict``); these models only
describe them (``responses={200: {"model": …}}``), so declaring one never changes or
filters an answer. They forbid keys they do not name, so an answer that grows a key the
document does not declare fails ``tests/e2e/test_openapi_truth.py``. A key that is always
there (maybe null) is required; one that is only sometimes there is ``sometimes()``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Count = Annotated[int, Field(ge=0)]
Score = float  # rounded to 6 places


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def sometimes(description: str | None = None) -> Any:
    """A key that is only sometimes in the answer (and never null when it is)."""
    return Field(default=None, description=description, json_schema_extra=_no_default)


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _OpenShape(BaseModel):
    """An answer whose other keys depend on the operation (a board report's details)."""

    model_config = ConfigDict(extra="allow")


class Error(_Shape):
    """Every error: what was wrong, in words a user can act on; nothing was written."""

    error: str
    fields: Annotated[list[str], sometimes("The fields at fault")]
    success: Annotated[Literal[False], sometimes("On the import routes, as agentmemory's")]
    report: Annotated[BoardReport, sometimes("A refused board operation's, on an MCP call")]


class VaultWriteAccepted(_Shape):
    """A write of the vault a replica handed to the vault's owner, which did not apply it
    in time (none runs, or one is taking over): kept in the database, and the next owner
    applies it. Sending it again is not needed."""

    accepted: Literal[True]
    queued: Annotated[int, Field(description="The queued write's id")]
    message: str


# A route that writes the vault (board, fragments) may answer this on a replica that does
# not own the vault (PostgreSQL); on SQLite the server owns it and never does.
QUEUED = {
    202: {
        "description": "Handed to the vault's owner, which did not apply it in time; kept "
        "in the database and applied by the next owner",
        "model": VaultWriteAccepted,
    }
}


# -- ingest and sessions -------------------------------------------------------------------


class Stored(_Shape):
    """A new event."""

    observationId: str
    eventSeq: int


class Deduplicated(_Shape):
    """An event whose ``(sessionId, eventId)`` was already stored: the original's ids."""

    deduplicated: Literal[True]
    sessionId: str
    eventId: str | None
    observationId: str


Observed = Annotated[Stored | Deduplicated, Field(title="Observed")]


class ItemFailure(_Shape):
    index: int
    eventId: str | None
    error: str


class BulkObserved(_Shape):
    success: Literal[True]
    total: Count
    imported: Count
    deduplicated: Count
    failed: Count
    errors: list[ItemFailure]
    results: Annotated[list[Observed | None], Field(description="null for a failed item")]


class Cursor(_Shape):
    at: str | None
    seq: int | None


class Watermarks(_Shape):
    summarized: Cursor | None
    extracted: Cursor | None
    reflected: Cursor | None
    graphExtracted: Cursor | None


class SessionView(_Shape):
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


class SessionStarted(_Shape):
    session: SessionView
    memorySessionId: Annotated[str | None, Field(description="null when the board was not written")]
    context: Annotated[str, Field(description="The Memory Session ID line and the memory block")]


class SummaryQueued(_Shape):
    success: Literal[True]
    queued: Annotated[bool, Field(description="false when a summary was already queued")]
    sessionId: str


class Noop(_Shape):
    success: Literal[True]
    noop: Literal[True]


class Sessions(_Shape):
    sessions: list[SessionView]


class ObservationView(_Shape):
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


class Observations(_Shape):
    observations: list[ObservationView]


class Live(_Shape):
    status: Literal["ok"]
    service: Literal["memvault"]
    version: str


class Pool(_Shape):
    size: Annotated[Count, Field(description="Connections open now")]
    max: Count
    inUse: Annotated[Count, Field(description="Connections lent out now")]
    waiting: Annotated[Count, Field(description="Requests waiting for a connection")]


class StoreFigures(_Shape):
    engine: str
    location: str
    sizeBytes: Count
    schemaVersion: int
    events: Count
    observations: Count
    sessions: Count
    pool: Annotated[Pool | None, Field(description="PostgreSQL's connection pool; null on SQLite")]


class Queue(_Shape):
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


class ProcessFigures(_Shape):
    pid: int
    rssBytes: int | None


class VaultFigures(_Shape):
    path: str
    fragmentsFolder: str
    boardRows: Count
    fragments: Count
    archivedFragments: Count


class Embedder(_Shape):
    provider: str
    model: str | None
    dimension: Annotated[int | None, Field(description="Known once the model has answered")]
    loaded: bool
    reason: str | None


class LLM(_Shape):
    provider: str
    model: str | None
    reason: str | None


class IndexBacklog(_Shape):
    lastEventSeq: int
    indexedThroughSeq: int
    eventsNotIndexed: Count
    documentsNotEmbedded: Annotated[Count | None, Field(description="null without an embedder")]
    caughtUp: bool
    indexer: Annotated[
        bool,
        Field(
            description="Whether this replica indexes the event log and embeds documents: "
            "on PostgreSQL the vault's owner does, and the other replicas follow its writes"
        ),
    ]


class Replication(_Shape):
    role: Literal["vault owner", "standby"]
    vaultOwner: Annotated[
        bool, Field(description="Whether this replica writes the vault (on SQLite, always)")
    ]
    since: Annotated[str | None, Field(description="When this replica took its role")]
    vaultWritesQueued: Annotated[
        Count, Field(description="Board and fragment writes queued, not applied by the owner yet")
    ]


class Health(_Shape):
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


# -- session board -------------------------------------------------------------------------


class BoardRowView(_Shape):
    sessionId: str
    agentName: str
    topic: str
    summary: str
    keywords: str
    status: str
    referencedBy: Annotated[str, Field(description="Comma-separated session ids, or a dash")]
    startedAt: str
    updatedAt: str


class BoardRows(_Shape):
    sessions: list[BoardRowView]


class InjectedMemory(_Shape):
    kind: str  # fragment | project | summary | observation
    id: str


class Injection(_Shape):
    """One memory block the session's agent was given."""

    at: str
    sessionId: str
    answered: str | None  # the host event it answered: SessionStart, UserPromptSubmit…
    items: list[InjectedMemory]
    tokens: int | None


class BoardRowWithSnapshot(_Shape):
    session: BoardRowView
    snapshot: str | None
    injections: list[Injection]  # what memory gave the agent, oldest first


class BoardReport(_OpenShape):
    """What a board operation did; the other keys are the operation's details."""

    operation: str
    ok: bool
    sessionId: str | None
    message: str


class BoardRefusal(BoardReport):
    """A board operation refused or not completed: its report, and why."""

    ok: Literal[False]
    error: str


class TriggerView(_Shape):
    operation: str
    sessionId: str | None
    phrase: str


class Triggered(_Shape):
    trigger: TriggerView | None


# -- memory --------------------------------------------------------------------------------


class _Identity(_Shape):
    kind: str
    id: str
    title: str
    summary: str
    project: str | None
    sessionId: str | None
    updatedAt: str
    eventIds: list[str]
    path: Annotated[str, sometimes("In the vault, when it is a file")]


class HitView(_Identity):
    score: Score
    relevance: Score
    importance: Score
    recency: Score
    archived: Annotated[Literal[True], sometimes("Only said of an archived memory")]


class MemoryView(_Identity):
    importance: float
    accessCount: Count
    lastAccessed: str | None
    archived: bool
    tags: Annotated[list[str], sometimes()]


class EntryView(MemoryView):
    body: str
    properties: dict[str, Any]


class SearchResults(_Shape):
    query: str
    results: list[HitView]


class CompactResults(_Shape):
    mode: Literal["compact"]
    results: list[HitView]


class ExpandedResults(_Shape):
    mode: Literal["expanded"]
    results: list[EntryView]
    truncated: bool


class Remembered(_Shape):
    success: Literal[True]
    action: Literal["created", "merged"]
    path: Annotated[str, Field(description="The fragment's file, in the vault")]
    similarity: float | None
    memory: Annotated[MemoryView, sometimes("The fragment, once the index holds it")]
    similarTo: Annotated[str | None, sometimes("When merged: the fragment's id")]


class Forgotten(_Shape):
    success: Literal[True]
    forgotten: str
    path: str | None


class FragmentDeleted(_Shape):
    success: Literal[True]
    deleted: bool = Field(description="False for a dry run: the id was checked, nothing deleted")
    id: str
    path: str = Field(description="Relative to the vault")
    summary: str | None = sometimes("The fragment's summary (not for a dry run)")


class Maintained(_Shape):
    success: Literal[True]
    dryRun: bool
    archived: list[str] = Field(description="Fragments archived (or that would be)")
    summarized: list[str] = Field(description="Projects whose L2 summary was written")


class Reindexed(_Shape):
    success: Literal[True]
    documents: Count = Field(description="Documents indexed or updated")


class JobsRun(_Shape):
    success: Literal[True]
    jobs_run: Count = Field(alias="jobsRun", description="Pipeline jobs run to the end")


class Memories(_Shape):
    memories: list[MemoryView]
    offset: Count
    limit: int


class OneMemory(_Shape):
    memory: EntryView


class ProjectMemory(_Shape):
    project: str
    summary: str | None
    total: Count
    fragments: list[MemoryView]


class Block(_Shape):
    kind: str
    id: str
    text: str


class Context(_Shape):
    context: str
    blocks: list[Block]
    tokens: Count
    budget: int
    truncated: bool


class Enriched(_Shape):
    context: str
    truncated: bool
    tokens: Count
    found: Annotated[Count, Field(description="Blocks about the files; 0: only the report line")]


# -- graph ---------------------------------------------------------------------------------


class NodeProperties(_Shape):
    mentions: Count
    firstSeen: str
    lastSeen: str


class Node(_Shape):
    id: str
    type: str
    name: str
    properties: NodeProperties
    sourceObservationIds: list[str]
    createdAt: str


class Edge(_Shape):
    id: str
    type: str
    sourceNodeId: str
    targetNodeId: str
    weight: int
    sourceObservationIds: list[str]
    lastSeen: str


class GraphSlice(_Shape):
    success: Literal[True]
    nodes: list[Node]
    edges: list[Edge]
    depth: Count
    truncated: bool
    limit: int
    offset: Count


class GraphCounts(_Shape):
    totalNodes: Count
    totalEdges: Count
    nodesByType: dict[str, Count]
    edgesByType: dict[str, Count]


class GraphStats(GraphCounts):
    success: Literal[True]


class GraphCleared(_Shape):
    success: Literal[True]
    cleared: GraphCounts


# -- import and export ---------------------------------------------------------------------


class TranscriptProblem(_Shape):
    file: str
    line: int
    error: str


class TranscriptReport(_Shape):
    files: Count
    lines: Count
    eventsSent: Count
    newEvents: Count
    duplicates: Count
    skipped: dict[str, Count]
    errorCount: Count
    errors: list[TranscriptProblem]
    sessionIds: list[str]


class TranscriptImport(_Shape):
    success: Literal[True]
    imported: Annotated[Count, Field(description="Files found to import")]
    sessionIds: list[str]
    observations: Count
    discovered: Count
    truncated: bool
    traversalCapped: bool
    maxFiles: int
    maxFilesUpperBound: int
    path: str
    status: Literal["running", "done", "failed"]
    startedAt: str
    finishedAt: str | None
    error: str | None
    report: TranscriptReport


class NoTranscriptImport(_Shape):
    success: Literal[True]
    status: Literal["idle"]


class OutcomeCounts(_Shape):
    new: Count
    existing: Count
    merged: Count
    replaced: Count
    skipped: Count
    refused: Count


class ArchiveProblem(_Shape):
    kind: str
    error: str
    line: Annotated[int, sometimes("Of a memvault archive")]
    item: Annotated[str, sometimes("In an agentmemory export: `memories[3]`")]


class ArchiveReport(_Shape):
    source: Literal["memvault", "agentmemory"]
    version: str
    strategy: str
    complete: bool
    counts: dict[str, OutcomeCounts]
    skipped: dict[str, Count]
    summariesQueued: Count
    problemCount: Count
    problems: list[ArchiveProblem]


class Imported(_Shape):
    success: Literal[True]
    strategy: str
    sessions: Count
    observations: Count
    memories: Count
    summaries: Count
    skipped: Count
    report: ArchiveReport


# Shapes the document names by reference without a route using them as a model.
REFERENCED = (Error, BoardRefusal)
