"""The store contract, in the parts it has.

Each part is one concern of the store a caller may need alone (the pipeline worker needs the
job queue, search needs the index). ``Store`` is all of them: what an engine implements and
what ``tests/store`` checks. The index is asked with a ``LexicalQuery``, plain values; only an
engine turns it into its own syntax (FTS5 in ``sqlite_documents``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memvault.domain import (
    AppendFailure,
    AppendResult,
    BoardRow,
    Document,
    DocumentDraft,
    Event,
    Job,
    NewEvent,
    Observation,
    ObservationDraft,
    Session,
    StoreStats,
    Watermark,
)

if TYPE_CHECKING:
    from memvault.graph.model import GraphDelta, GraphSlice, GraphStats

AppendOutcome = AppendResult | AppendFailure

# The fields of a document the lexical index matches, in the order of its column weights.
FIELDS = ("title", "body", "context", "dates")
# A document's own text: where a phrase or a prefix must be found.
OWN_TEXT = ("title", "body")


@dataclass(frozen=True, slots=True)
class LexicalQuery:
    """What the lexical index is asked, in analyzed terms (see ``search/analyzer.py``).

    A result holds every phrase (its words together, in order) and, for each prefix, a word
    starting with one of its starts, both in ``required_fields``; and, when ``anchor`` is
    given, one of the anchor terms (all of them with ``all_of``). Each of ``terms`` found in
    ``fields`` counts towards the score but none is required unless nothing else is: a
    query of terms alone matches documents holding any of them. Each term counts once.
    """

    terms: tuple[str, ...] = ()
    phrases: tuple[tuple[str, ...], ...] = ()
    prefixes: tuple[tuple[str, ...], ...] = ()  # each: the ways its start may be indexed
    anchor: tuple[str, ...] = ()
    all_of: bool = False
    fields: tuple[str, ...] = FIELDS
    required_fields: tuple[str, ...] = OWN_TEXT

    @property
    def empty(self) -> bool:
        return not (self.terms or self.phrases or self.prefixes or self.anchor)


class StoreBase(ABC):
    """What every engine has whatever its parts: counts, the write queue's state, closing."""

    engine: str

    @abstractmethod
    def stats(self) -> StoreStats: ...

    @abstractmethod
    def sync(self) -> None:
        """Wait until every write queued so far (access counts included) is committed."""

    @property
    @abstractmethod
    def pending_writes(self) -> int:
        """Requests' writes queued but not yet committed (background threads' writes
        queue apart, behind them)."""

    @property
    @abstractmethod
    def write_failure(self) -> BaseException | None:
        """Why the store can no longer write, if it cannot."""

    def write_trouble(self) -> str | None:
        """Why writes fail for now (a full disk, a lock another process holds), if they do:
        the last write's failure, checked again with a small write, so it clears by itself
        once writes pass."""
        return None

    @abstractmethod
    def close(self) -> None: ...


class EventLog(ABC):
    """The raw log of events and the observation derived from each at ingest.

    Events are never updated; the observations are read here (rewritten in ``Derived``)."""

    @abstractmethod
    def submit_events(self, events: Sequence[NewEvent]) -> Future[list[AppendOutcome]]:
        """Append events to the log, each with its observation and lazy session.

        Each event is its own unit: it lands whole (event, observation, session counters) or
        not at all, and a failure of one never fails another. An event whose
        ``(session_id, client_event_id)`` is already stored, or comes earlier in the same
        batch, is not written again: its result says ``deduplicated`` and carries the
        original ids. Results are in input order; the future resolves once they are durable.
        """

    def append_events(self, events: Sequence[NewEvent]) -> list[AppendOutcome]:
        return self.submit_events(events).result()

    @abstractmethod
    def events_after(self, session_id: str, seq: int, *, limit: int) -> list[Event]:
        """A session's events that arrived after sequence ``seq``, in arrival order."""

    @abstractmethod
    def log_after(self, seq: int, *, limit: int) -> list[Event]:
        """The whole log's events past ``seq``, in sequence order (for rebuilds)."""

    @abstractmethod
    def events_before(self, session_id: str, seq: int, *, limit: int) -> list[Event]:
        """The session's last ``limit`` events up to ``seq``, in the order they happened:
        the context a graph run reads again."""

    @abstractmethod
    def list_events(self, session_id: str, *, limit: int, offset: int = 0) -> list[Event]:
        """Raw events as stored, in event order."""

    @abstractmethod
    def last_event_seq(self) -> int:
        """The sequence number of the newest event; 0 when there is none."""

    @abstractmethod
    def observations_of(self, seqs: Sequence[int]) -> list[Observation]:
        """The observations of these events, in sequence order."""

    @abstractmethod
    def list_observations(
        self, session_id: str, *, limit: int, offset: int = 0
    ) -> list[Observation]:
        """In event order (event time, then arrival)."""

    @abstractmethod
    def observations_after(self, seq: int, *, limit: int) -> list[tuple[Observation, str]]:
        """Observations of events after sequence ``seq`` with their project, in seq order."""

    @abstractmethod
    def observation_window(
        self, session_id: str, first: tuple[str, int], last: tuple[str, int], *, margin: int
    ) -> list[tuple[Observation, str]]:
        """A session's observations (with their project) in event order, from ``margin``
        before the (occurred_at, seq) key ``first`` to ``margin`` after ``last``."""

    @abstractmethod
    def observation_changes(self, after: int, *, limit: int) -> list[tuple[int, int]]:
        """(change id, event seq) of observations rewritten in place, past change ``after``."""

    @abstractmethod
    def observations_since(self, seq: int) -> int:
        """How many observations belong to events after ``seq``: a follower's backlog."""


class Sessions(ABC):
    """Host sessions, created lazily by the log, and the watermarks that say how far each
    derived process has read a session."""

    @abstractmethod
    def ensure_session(
        self,
        session_id: str,
        *,
        project: str,
        cwd: str,
        agent_id: str | None = None,
        title: str | None = None,
    ) -> Session:
        """Create the session if it does not exist (agent id honoured only then)."""

    @abstractmethod
    def get_session(self, session_id: str) -> Session | None: ...

    @abstractmethod
    def list_sessions(
        self, *, limit: int, offset: int = 0, agent_id: str | None = None
    ) -> list[Session]:
        """Most recently active first."""

    @abstractmethod
    def record_injected(self, session_id: str, items: Sequence[tuple[str, str]], at: str) -> None:
        """Note that ``session_id`` was given each ``(kind, id)`` (waits for the commit: the
        session's next block must not give them again)."""

    @abstractmethod
    def injected(self, session_id: str) -> set[tuple[str, str]]:
        """Every ``(kind, id)`` ``session_id`` was given so far."""

    @abstractmethod
    def advance_extraction(self, session_id: str, through: Watermark) -> bool:
        """Move the fragment-extraction watermark forward (never back); whether it moved."""

    @abstractmethod
    def sessions_to_summarize(
        self, *, threshold: int, idle_before: str, retry_before: str, limit: int
    ) -> list[str]:
        """Sessions with unsummarized observations that have reached ``threshold``, or whose
        last event came before ``idle_before``; not attempted since ``retry_before``."""

    @abstractmethod
    def mark_summary_attempt(self, session_id: str, at: str) -> None:
        """Remember when a session's summary was last attempted (for the sweep's cooldown)."""

    @abstractmethod
    def sessions_to_compress(self, *, limit: int) -> list[str]:
        """Sessions with events past both their compression and summary watermarks."""


class BoardMirror(ABC):
    """The session board mirrored from the vault, and which host session each row is."""

    @abstractmethod
    def link_board_session(
        self, session_id: str, board_session_id: str, *, replacing: str | None = None
    ) -> bool:
        """Tie a host session to its board row. It must not have one yet, or have
        ``replacing`` (a row that left the board); False if another writer got there first."""

    @abstractmethod
    def board_links(self) -> dict[str, tuple[str, str]]:
        """Board Session ID → (host session id, project) for every tied session."""

    @abstractmethod
    def board_session_taken(self, board_session_id: str) -> bool:
        """Whether a host session is tied to this board Session ID."""

    @abstractmethod
    def replace_board_rows(self, rows: Sequence[BoardRow]) -> None:
        """Make the board mirror exactly ``rows`` (in board order)."""

    @abstractmethod
    def board_rows(self, *, status: str | None = None, limit: int = 1000) -> list[BoardRow]:
        """Mirrored board rows in board order, optionally of one status."""

    @abstractmethod
    def board_row(self, session_id: str) -> BoardRow | None:
        """The mirrored row of one Memory Session ID, if the board has it."""

    @abstractmethod
    def board_row_count(self) -> int:
        """Rows of the mirrored session board."""


@dataclass(frozen=True, slots=True)
class VaultWrite:
    """A board or fragment write a replica that does not own the vault left for the owner."""

    id: int
    kind: str  # the Memory use case to run: register, update, remember, …
    payload: dict
    done: bool = False
    result: dict | None = None  # what the owner's run answered, once done


class VaultWrites(ABC):
    """Who owns the vault (writes its files), and the writes the other replicas queue for
    it. Applied in queue order by the owner; each is keyed by its request, so queueing the
    same request twice keeps one."""

    @abstractmethod
    def pool_stats(self) -> dict[str, int] | None:
        """The connection pool's state (size, in use, waiting), or None for an engine
        without one (SQLite)."""

    @abstractmethod
    def take_vault_ownership(self) -> bool:
        """Whether this store's process owns the vault now: holds the owner's lock, taking
        it if it is free (SQLite: always, there is one server)."""

    @abstractmethod
    def give_up_vault_ownership(self) -> None:
        """Let another replica take the vault (on close)."""

    @abstractmethod
    def queue_vault_write(self, key: str, kind: str, payload: dict) -> int:
        """Queue a write for the owner; its id (the earlier one's for a key queued before)."""

    @abstractmethod
    def vault_writes_due(self, *, limit: int = 50) -> list[VaultWrite]:
        """Writes not applied yet, oldest first."""

    @abstractmethod
    def finish_vault_write(self, write_id: int, result: dict) -> None:
        """Mark a write applied, with what it answered."""

    @abstractmethod
    def vault_write(self, write_id: int) -> VaultWrite | None:
        """One queued write, applied or not."""

    @abstractmethod
    def vault_writes_waiting(self) -> int:
        """Writes queued and not applied yet: the vault's lag."""


class JobQueue(ABC):
    """The pipeline's work queue: dedupe keys, run-after times, leases, retries."""

    @abstractmethod
    def enqueue_job(
        self,
        kind: str,
        payload: dict,
        *,
        dedupe_key: str | None = None,
        run_after: str | None = None,
    ) -> bool:
        """Queue a job (due now unless ``run_after``); False when a pending job of the same
        kind has the same ``dedupe_key`` (a running one does not count: what arrives while
        it runs needs another run)."""

    @abstractmethod
    def claim_job(self, worker: str, kinds: Sequence[str], *, lease_seconds: float) -> Job | None:
        """Take the oldest due job of these kinds, or one whose worker's lease ran out."""

    @abstractmethod
    def hurry_job(self, kind: str, dedupe_key: str) -> bool:
        """Make a pending job that was queued for later (never attempted) due now; False
        when there is none. A job waiting out a retry backoff keeps its time."""

    @abstractmethod
    def finish_job(self, job: Job) -> bool:
        """Mark a claimed job done; False (and nothing written) if its lease was lost."""

    @abstractmethod
    def fail_job(self, job: Job, error: str, *, retry_in: float | None) -> bool:
        """Record a failure: due again in ``retry_in`` seconds, or failed for good."""

    @abstractmethod
    def prune_jobs(self, before: str) -> int:
        """Delete finished and given-up jobs last touched before ``before``."""


class Derived(ABC):
    """What the pipeline derived from the log: summaries, compressed observations, the
    fragment files it wrote, kept LLM answers, forgotten events. Rebuildable from the log."""

    @abstractmethod
    def session_summary(self, session_id: str) -> tuple[dict, int] | None:
        """The stored summary of a session and its revision."""

    @abstractmethod
    def write_summary(
        self, session_id: str, summary: dict, *, through: Watermark, observations: int
    ) -> bool:
        """Store a session's new summary and move its summary watermark to ``through``, in
        one transaction; False (nothing written) if the watermark moved meanwhile."""

    @abstractmethod
    def upgrade_observations(
        self,
        session_id: str,
        upgrades: Sequence[tuple[int, ObservationDraft]],
        *,
        derived_by: str,
        through: Watermark,
    ) -> bool:
        """Rewrite still-synthetic observations in place (each keyed by its event's sequence)
        and move the session's compression watermark to ``through``, in one transaction;
        False, writing nothing, when the watermark is already there."""

    @abstractmethod
    def rederive_observations(self, drafts: Sequence[tuple[int, ObservationDraft]]) -> int:
        """Put back the synthetic observation of each event; how many changed."""

    @abstractmethod
    def record_pipeline_fragment(self, path: str, sha256: str) -> None:
        """Remember the content the pipeline left in a fragment file (vault-relative path)."""

    @abstractmethod
    def pipeline_fragment(self, path: str) -> str | None:
        """The sha256 of what the pipeline left in this fragment file, if it wrote it."""

    @abstractmethod
    def pipeline_fragments(self) -> dict[str, str]:
        """Every fragment file the pipeline wrote, with the sha256 of what it left there."""

    @abstractmethod
    def forget_pipeline_fragments(self, paths: Sequence[str]) -> None:
        """Stop tracking these fragment files."""

    @abstractmethod
    def keep_result(self, kind: str, session_id: str, through: int, result: str) -> None:
        """Keep what an LLM answered for a run that ends at event ``through``, until the
        run's watermark moves (``advance_extraction`` drops it)."""

    @abstractmethod
    def kept_result(self, kind: str, session_id: str, through: int) -> str | None:
        """The answer kept for this run, if it ran before and did not finish."""

    @abstractmethod
    def forget_events(self, event_ids: Sequence[str]) -> None:
        """Note that the fragment learned from these events was forgotten."""

    @abstractmethod
    def forgotten_events(self, event_ids: Sequence[str]) -> set[str]:
        """Which of these event ids a forgotten fragment was learned from."""

    @abstractmethod
    def reset_derived(self) -> None:
        """Drop session summaries and the summary, extraction and compression watermarks,
        and queued jobs, so the pipeline derives everything again from the raw log."""


class Graph(ABC):
    """The entity graph: a derived catalog of nodes and edges with their sources."""

    @abstractmethod
    def write_graph(
        self,
        session_id: str,
        delta: GraphDelta,
        *,
        through: Watermark,
        after: int | None = None,
    ) -> bool:
        """Merge what a session's events up to ``through`` showed into the graph and move
        its graph watermark there, in one transaction. False, writing nothing, when the
        watermark is already at or past ``through``, or (given ``after``) no longer at
        ``after``, where the batch began: a repeated or overtaken run counts nothing twice."""

    @abstractmethod
    def write_fragment_graph(self, delta: GraphDelta) -> None:
        """Merge what a fragment showed; a source already recorded on a node or an edge
        adds no mention, so writing the same fragment again changes no count."""

    @abstractmethod
    def graph_query(
        self,
        *,
        start: str | None = None,
        kind: str | None = None,
        text: str | None = None,
        depth: int = 1,
        limit: int = 50,
        offset: int = 0,
    ) -> GraphSlice:
        """A page of nodes and the edges among them: those within ``depth`` hops of the
        node ``start`` (an id, ``kind:key``), else those whose name contains ``text``,
        else the most mentioned; ``kind`` keeps one kind. Bounded whatever is asked (see
        ``memvault.graph.model``)."""

    @abstractmethod
    def graph_stats(self) -> GraphStats:
        """Nodes per kind and edges per relation, from counters."""

    @abstractmethod
    def reset_graph(self) -> GraphStats:
        """Empty the graph and move every session's graph watermark back to the start, in
        one transaction; what the graph held."""

    @abstractmethod
    def forget_graph_source(self, source: str) -> None:
        """Take one memory id (a forgotten fragment's id, an ``obs_<seq>``) off every node
        and edge it was seen in, in one transaction: a mention or a unit of weight less
        each, a node (with its edges) or an edge gone when none is left. Indexed: only the
        rows the memory touched are read."""

    @abstractmethod
    def sessions_behind_graph(self, *, limit: int) -> list[str]:
        """Sessions whose summary is past their graph watermark (after a reset, in a
        database older than the graph), the quietest first; from an index."""


class SearchIndex(ABC):
    """Documents (fragments, summaries, observations), their lexical index and vectors,
    followers' cursors and read counts."""

    @abstractmethod
    def write_documents(
        self,
        upserts: Sequence[DocumentDraft] = (),
        deletes: Sequence[tuple[str, str]] = (),
        *,
        cursor: tuple[str, int] | None = None,
    ) -> None:
        """Index, re-index (by ``(kind, key)``) and drop documents, and move a follower's
        cursor, in one transaction. An unchanged content hash keeps the document's revision
        and vector."""

    @abstractmethod
    def cursor(self, name: str) -> int:
        """Where a follower (e.g. the observation indexer) has got to; 0 at first."""

    @abstractmethod
    def lexical_search(
        self,
        query: LexicalQuery,
        *,
        kinds: Sequence[str],
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 100,
        weights: tuple[float, float, float, float] = (1.0, 1.0, 0.5, 0.5),
        newest: int | None = None,
    ) -> list[tuple[int, float]]:
        """(document id, BM25 score) best first, for a query over analyzed terms, among the
        documents of these kinds (of one project, live only unless ``include_archived``);
        fields weighted (title, body, context, dates); ``newest`` limits it to the last that
        many documents indexed."""

    @abstractmethod
    def term_counts(self, terms: Sequence[str], *, cap: int) -> dict[str, int]:
        """How many documents hold each analyzed term, counted no further than ``cap + 1``."""

    @abstractmethod
    def document_count(self) -> int:
        """How many documents the index holds."""

    @abstractmethod
    def documents(self, ids: Sequence[int]) -> dict[int, Document]: ...

    @abstractmethod
    def document(self, kind: str, key: str) -> Document | None: ...

    @abstractmethod
    def list_documents(
        self,
        kind: str,
        *,
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 50,
        offset: int = 0,
    ) -> list[Document]:
        """Most recently updated first."""

    @abstractmethod
    def document_stamps(self, kind: str) -> dict[str, tuple[str, float | None]]:
        """key → (content hash, mtime) of every document of a kind: what a scan compares."""

    @abstractmethod
    def documents_to_embed(self, after_revision: int, *, limit: int) -> list[tuple[int, int, str]]:
        """(id, revision, text) of documents changed after a revision, oldest change first."""

    @abstractmethod
    def write_vectors(
        self, model: str, vectors: Sequence[tuple[int, int, bytes]], *, cursor: tuple[str, int]
    ) -> None:
        """Store (id, revision, vector) for documents still at that revision; move the
        embedding cursor."""

    @abstractmethod
    def vectors(self, model: str) -> list[tuple[int, str, bytes]]:
        """(document id, kind, vector) of every stored vector of a model."""

    @abstractmethod
    def vector_changes(
        self, model: str, after_revision: int, through_revision: int, *, limit: int
    ) -> list[tuple[int, str, int, bytes | None]]:
        """(id, kind, revision, vector of ``model`` or None) of the documents changed after
        ``after_revision`` up to ``through_revision``, oldest change first: what an
        in-memory index follows other processes' vectors by (None: the document has no
        vector of this model now, so a vector held for it is stale)."""

    @abstractmethod
    def document_kinds(self, ids: Sequence[int]) -> dict[int, str]:
        """The kind of each of these documents that still exists."""

    @abstractmethod
    def document_ids(
        self, *, kinds: Sequence[str], project: str, include_archived: bool = False
    ) -> list[int]:
        """Ids of a project's documents of these kinds."""

    @abstractmethod
    def record_access(self, keys: Sequence[tuple[str, str]], at: str) -> None:
        """Count one read of each ``(kind, key)`` at ``at`` (queued: it does not wait for the
        commit)."""

    @abstractmethod
    def move_access(self, kind: str, moves: Sequence[tuple[str, str]]) -> None:
        """Carry read counts over from old keys to new ones (a fragment moved)."""

    @abstractmethod
    def documents_since(self, revision: int) -> int:
        """How many documents changed after ``revision``: the embedding backlog."""

    @abstractmethod
    def fragment_counts(self) -> tuple[int, int]:
        """Indexed fragments: (live, archived)."""


class Store(
    StoreBase,
    EventLog,
    Sessions,
    BoardMirror,
    VaultWrites,
    JobQueue,
    Derived,
    Graph,
    SearchIndex,
):
    """The whole contract: every part, in one engine."""


PARTS = (
    StoreBase,
    EventLog,
    Sessions,
    BoardMirror,
    VaultWrites,
    JobQueue,
    Derived,
    Graph,
    SearchIndex,
)
