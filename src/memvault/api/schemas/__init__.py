"""What the REST routes answer, as pydantic models for the OpenAPI document, one module
per group of routes.

The routes build their answers as plain dicts (``memvault.present``); these models only
describe them (``responses={200: {"model": …}}``), so declaring one never changes or
filters an answer. They forbid keys they do not name, so an answer that grows a key the
document does not declare fails ``tests/e2e/test_openapi_truth.py``. A key that is always
there (maybe null) is required; one that is only sometimes there is ``sometimes()``.
"""

from __future__ import annotations

from memvault.api.schemas.board import (  # noqa: F401
    BoardRefusal,
    BoardReport,
    BoardRows,
    BoardRowView,
    BoardRowWithSnapshot,
    InjectedMemory,
    Injection,
    Triggered,
    TriggerView,
)
from memvault.api.schemas.common import (  # noqa: F401
    QUEUED,
    Error,
    VaultWriteAccepted,
)
from memvault.api.schemas.graph import (  # noqa: F401
    Edge,
    GraphCleared,
    GraphCounts,
    GraphSlice,
    GraphStats,
    Node,
    NodeProperties,
)
from memvault.api.schemas.health import (  # noqa: F401
    LLM,
    Embedder,
    Health,
    IndexBacklog,
    Injected,
    Live,
    Pool,
    ProcessFigures,
    Queue,
    Replication,
    ServerIdentity,
    StoreFigures,
    VaultFigures,
)
from memvault.api.schemas.ingest import (  # noqa: F401
    BulkObserved,
    Cursor,
    Deduplicated,
    ItemFailure,
    Noop,
    Observations,
    ObservationView,
    Observed,
    Sessions,
    SessionStarted,
    SessionView,
    Stored,
    SummaryQueued,
    Watermarks,
)
from memvault.api.schemas.memory import (  # noqa: F401
    Block,
    CompactResults,
    Context,
    Enriched,
    EntryView,
    ExpandedResults,
    Forgotten,
    FragmentDeleted,
    HitView,
    JobsRun,
    Maintained,
    Memories,
    MemoryView,
    OneMemory,
    ProjectMemory,
    Reindexed,
    Remembered,
    SearchResults,
    StaleFragments,
)
from memvault.api.schemas.shape import (  # noqa: F401
    Count,
    OpenShape,
    Score,
    Shape,
    sometimes,
)
from memvault.api.schemas.transfer import (  # noqa: F401
    ArchiveProblem,
    ArchiveReport,
    Imported,
    NoTranscriptImport,
    OutcomeCounts,
    TranscriptImport,
    TranscriptProblem,
    TranscriptReport,
)

# Shapes the document names by reference without a route using them as a model.
REFERENCED = (Error, BoardRefusal)
