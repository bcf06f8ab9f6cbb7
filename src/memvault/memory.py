"""Memory: memvault's use cases. The REST API, MCP server and CLI call this and nothing below."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
import shutil
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from memvault import __version__, jsontext
from memvault.background import Pacer, QuietCollector, favour_requests
from memvault.config import Settings
from memvault.domain import (
    AppendFailure,
    AppendResult,
    BoardRow,
    Event,
    NewEvent,
    Observation,
    Session,
    StoreStats,
    iso,
    utc_now,
)
from memvault.errors import InvalidInput, MemvaultError, StoreFailure
from memvault.hook import spool
from memvault.hook.paths import spool_folder
from memvault.ingest import INLINE_DATA_CHARS, Envelope, Redactor, prepare
from memvault.ingest.envelope import SessionStart, validate
from memvault.ingest.spool import SpoolDrain
from memvault.pipeline.service import Pipeline
from memvault.reading import (
    INJECTIONS_SCANNED,
    Activity,
    BoardEntry,
    IngestRate,
    Timeline,
    board_entry,
    project_activity,
    recent_injections,
    session_activity,
    session_timeline,
)
from memvault.recall import INJECTION_HOOK, Recall, open_index
from memvault.search.context import MEMORY_KINDS, Packed
from memvault.search.indexer import Backlog
from memvault.store import AppendOutcome, Store, open_store
from memvault.vault.board import BoardFormatError
from memvault.vault.files import file_sha256
from memvault.vault.fragments import CheckReport, check_folder
from memvault.vault.lifecycle import Report, SessionBoard
from memvault.vault.owner import VaultOwner
from memvault.vault.remember import DerivedFragment, Draft
from memvault.vault.snapshot import Snapshot, SnapshotInput, as_snapshot
from memvault.vault_writes import apply as apply_vault_write
from memvault.vault_writes import vault_write

log = logging.getLogger(__name__)

BULK_CHUNK = 1000
_HOST_ALIASES = {"claude": "claude-code", "claudecode": "claude-code", "cursor-agent": "cursor"}
# Past this many queued writes the writer is falling behind: health says "degraded".
WRITE_BACKLOG_LIMIT = 10_000
# Past this many board and fragment writes waiting for the vault's owner, health says so.
VAULT_BACKLOG_LIMIT = 100
# Less room than this on a vault folder's disk, and the next write may fail.
LOW_SPACE_BYTES = 1024 * 1024
# What an injection record lists: the memories given, and the report line.
INJECTED_KINDS = MEMORY_KINDS | {"report"}
# Host events that end a turn: a signal to bring the session's summary up to date.
TURN_ENDS = frozenset({"stop", "session_end", "subagent_stop"})


@dataclass(slots=True)
class ObserveResult:
    observation_id: str
    session_id: str
    event_id: str | None
    event_seq: int
    deduplicated: bool

    @classmethod
    def of(cls, result: AppendResult) -> ObserveResult:
        return cls(
            result.observation_id,
            result.session_id,
            result.client_event_id,
            result.event_seq,
            result.deduplicated,
        )


@dataclass(frozen=True, slots=True)
class ItemError:
    index: int
    event_id: str | None
    error: str


@dataclass(slots=True)
class BulkResult:
    total: int = 0
    imported: int = 0
    deduplicated: int = 0
    failed: int = 0
    errors: list[ItemError] = field(default_factory=list)
    results: list[ObserveResult | None] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class StartedSession:
    session: Session
    board: Report  # ok with the Memory Session ID, or why there is none
    context: str = ""  # the project's memory block, to inject


@dataclass(frozen=True, slots=True)
class EmbedderState:
    """The embedder semantic search uses, and whether it answers."""

    provider: str  # local | openai | none
    model: str | None
    dimension: int | None  # known once the model answered
    loaded: bool
    reason: str | None = None  # why it is not loaded: off, not installed, failed, loading


@dataclass(frozen=True, slots=True)
class LLMState:
    """The LLM background work uses, if any."""

    provider: str  # openai | anthropic | none
    model: str | None
    reason: str | None = None  # why there is none


@dataclass(frozen=True, slots=True)
class Health:
    status: str
    version: str
    uptime_seconds: float
    store: StoreStats
    pending_writes: int
    rss_bytes: int | None
    pid: int
    spooled: int = 0  # events hooks kept while the server was away, not drained yet
    reasons: tuple[str, ...] = ()  # why the status is not ok
    vault: str = ""
    fragments_folder: str = ""
    embedder: EmbedderState | None = None
    llm: LLMState | None = None
    board_rows: int = 0
    fragments: int = 0  # live fragments indexed
    archived_fragments: int = 0
    backlog: Backlog | None = None  # what search cannot find yet
    pool: dict[str, int] | None = None  # the store's connections (PostgreSQL)
    vault_owner: bool = True  # whether this replica writes the vault
    vault_owner_since: str | None = None  # when it became the owner (or a standby)
    vault_writes_queued: int = 0  # board and fragment writes the owner has not applied yet


class Memory(Recall):
    """An open memvault: a store, a vault folder and the settings that located them, and
    the parts made of them: the session board, the search index, the pipeline."""

    def __init__(self, settings: Settings, store: Store) -> None:
        self.settings = settings
        self.store = store
        self.board = SessionBoard(
            settings.vault_path, is_taken=store.board_session_taken, language=settings.language
        )
        # The board as host registrations use it: they wait briefly for the lock, so a
        # vault someone holds cannot tie up the server.
        self._host_board = SessionBoard(
            settings.vault_path,
            lock_timeout=2.0,
            is_taken=store.board_session_taken,
            language=settings.language,
        )
        self.semantic, self.indexer, self.searcher = open_index(
            settings, store, refresh_board=self.sync_board
        )
        # The server's own secrets are redacted from every event like any other secret.
        self.redactor = Redactor(
            {
                "memvault_secret": settings.secret_value(),
                "llm_api_key": settings.llm_api_key and settings.llm_api_key.get_secret_value(),
                "embedding_api_key": settings.embedding_api_key
                and settings.embedding_api_key.get_secret_value(),
            }
        )
        # Shared by the server's background threads: they give way while events arrive.
        self.pacer = Pacer()
        self.ingest_rate = IngestRate()  # events stored per minute, for the viewer's chart
        self._started = time.monotonic()
        self._linked: set[str] = set()
        self._registering: set[str] = set()
        self._sync_lock = threading.Lock()
        self._board_mark: tuple[int, int] | bool | None = False
        self._registration_locks = tuple(threading.Lock() for _ in range(64))
        self._pipeline_running = False
        self._board_watcher: BoardWatcher | None = None
        self._spool_drain: SpoolDrain | None = None
        self._collector: QuietCollector | None = None
        self._serving = False
        # Which replica writes the vault: on PostgreSQL, one at a time; on SQLite, this one.
        self.vault_owner = VaultOwner(
            store,
            apply=lambda kind, payload: apply_vault_write(self, kind, payload),
            on_gain=self._gained_vault,
            on_loss=self._lost_vault,
            vault=settings.vault_path,
        )
        self.indexer.owns_vault = self.vault_owner.is_owner

    @classmethod
    def open(cls, settings: Settings | None = None, **overrides: Any) -> Self:
        """Open (creating if needed) the memory at ``settings.home``.

        ``Memory.open(home="/tmp/x")`` overrides single settings; with no arguments the
        environment decides.
        """
        if settings is None:
            settings = Settings(**overrides)
        elif overrides:
            settings = settings.model_copy(update=overrides)
        if settings.vault is not None and not settings.vault.is_dir():
            raise MemvaultError(
                f"MEMVAULT_VAULT is {settings.vault}, which is not a folder: point it at an "
                "existing Obsidian vault, or unset it to use $MEMVAULT_HOME/vault"
            )
        settings.home.mkdir(parents=True, exist_ok=True)
        store = open_store(
            settings.store_url,
            synchronous=settings.sqlite_synchronous,
            lock_wait=settings.lock_wait_seconds,
            pool_size=settings.postgres_pool_size,
        )
        return cls(settings, store)

    def close(self) -> None:
        self.stop_background()
        self.vault_owner.stop()
        if "pipeline" in self.__dict__:
            self.pipeline.close()
        self.store.close()

    # -- what a server runs beside its requests --------------------------------------------

    def start_background(self) -> None:
        """Start the threads a server runs, the one place that says which: the board
        watcher, the indexer, the pipeline's worker (unless ``worker_in_server`` is off)
        and the hook spool's drain (events hooks kept while the server was away); and
        it moves the interpreter's full garbage collections to quiet moments."""
        favour_requests()
        if self._collector is None:
            self._collector = QuietCollector(self.pacer)
            self._collector.start()
        self._serving = True
        if self.vault_owner.check():  # asked before (a health report): start them now
            self._gained_vault()
        self.vault_owner.start()  # a standby starts them when it takes the vault over
        self.start_indexing()
        if self._spool_drain is None:
            self._spool_drain = SpoolDrain(self)
            self._spool_drain.start()

    def stop_background(self) -> None:
        """Stop what ``start_background`` (or ``start_pipeline``, ``start_indexing``)
        started, feeders first: the spool drain, then the worker and the indexer it
        nudges, then the board watcher."""
        if self._spool_drain is not None:
            self._spool_drain.stop()
            self._spool_drain = None
        self._serving = False
        self.stop_pipeline()
        self.stop_indexing()
        self.vault_owner.stop()  # and the board watcher with it
        if self._collector is not None:
            self._collector.stop()
            self._collector = None

    def _gained_vault(self) -> None:
        """This replica writes the vault now: it watches the board for hand edits and runs
        the pipeline (whose summaries and fragments are vault files)."""
        if not self._serving:
            return
        if self._board_watcher is None:
            self._board_watcher = BoardWatcher(self, interval=self.settings.board_poll_seconds)
            self._board_watcher.start()
        if self.settings.worker_in_server:
            self.start_pipeline()

    def _lost_vault(self) -> None:
        self.stop_pipeline()
        if self._board_watcher is not None:
            self._board_watcher.stop()
            self._board_watcher = None

    # -- the pipeline ---------------------------------------------------------------------

    @functools.cached_property
    def pipeline(self) -> Pipeline:
        # Made on first use, unlike the other parts: it opens the configured LLM, whose SDK
        # takes most of a second to import, and a provider set up wrong is an error only
        # the commands that process events should meet.
        return Pipeline(self, pacer=self.pacer)

    def start_pipeline(self) -> None:
        """Process captured events in the background (the server does this)."""
        if not self._pipeline_running:
            self.pipeline.worker.start()
            self._pipeline_running = True

    def stop_pipeline(self) -> None:
        if self._pipeline_running:
            self.pipeline.worker.stop()
            self._pipeline_running = False

    def request_summary(self, session_id: str) -> bool:
        """A turn ended, or someone asked: bring the session's summary up to date soon."""
        return self.pipeline.request_summary(session_id)

    def session_summary(self, session_id: str) -> dict | None:
        stored = self.store.session_summary(session_id)
        return stored[0] if stored else None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- ingest ---------------------------------------------------------------------------

    def observe(self, envelope: Envelope | Mapping[str, Any]) -> ObserveResult:
        """Record one hook event: raw event, synthetic observation and lazy session, at once.

        Raises ``InvalidInput`` naming the bad field; nothing is written then.
        """
        event = prepare(_envelope(envelope), redactor=self.redactor)
        result = _single(self.store.submit_events([event]).result())
        self._after_ingest(event, result)
        return result

    async def observe_async(self, envelope: Envelope | Mapping[str, Any]) -> ObserveResult:
        """``observe`` for the event loop: a large event is prepared on a thread, so that
        redacting it holds up no other request."""
        envelope = _envelope(envelope)
        data_text = jsontext.dumps(envelope.data)
        if len(data_text) <= INLINE_DATA_CHARS:
            event = prepare(envelope, redactor=self.redactor, data_text=data_text)
        else:
            event = await asyncio.to_thread(
                prepare, envelope, redactor=self.redactor, data_text=data_text
            )
        result = _single(await asyncio.wrap_future(self.store.submit_events([event])))
        self._after_ingest(event, result)
        return result

    def _after_ingest(self, event: NewEvent, result: ObserveResult) -> None:
        self.ingest_rate.add(0 if result.deduplicated else 1)
        self.nudge_indexer()
        if event.hook_type in TURN_ENDS and self._pipeline_running:
            self.pipeline.turn_ended(event.session_id)

    def observe_many(self, envelopes: Iterable[Envelope | Mapping[str, Any]]) -> BulkResult:
        """Record many events. Each is validated and stored on its own, so one bad item
        fails alone; results keep the input order."""
        bulk = BulkResult()
        chunk: list[Any] = []
        for envelope in envelopes:
            chunk.append(envelope)
            if len(chunk) >= BULK_CHUNK:
                # Chunk by chunk rather than overlapping preparation with the writer:
                # both need the GIL, and measured, the overlap is slower.
                self._collect(bulk, *self._submit(bulk, chunk, len(bulk.results)))
                chunk = []
        if chunk:
            self._collect(bulk, *self._submit(bulk, chunk, len(bulk.results)))
        self.ingest_rate.add(bulk.imported)
        self.nudge_indexer()
        return bulk

    async def observe_many_async(self, envelopes: list[Any]) -> BulkResult:
        """``observe_many`` for the event loop: the batch is validated and prepared on a
        thread (up to 500 events: always long enough to hold up other requests)."""
        bulk = BulkResult()
        positions, future, events = await asyncio.to_thread(self._submit, bulk, envelopes, 0)
        outcomes = await asyncio.wrap_future(future) if future else []
        _record(bulk, positions, outcomes)
        self._turns_ended(events, outcomes)
        self.ingest_rate.add(bulk.imported)
        self.nudge_indexer()
        return bulk

    def _submit(
        self, bulk: BulkResult, items: list[Any], base: int
    ) -> tuple[list[int], Any, list[NewEvent]]:
        """Validate and prepare ``items``; queue the valid ones. Invalid ones are recorded."""
        bulk.total += len(items)
        bulk.results.extend([None] * len(items))
        positions, events = [], []
        received_at = iso(utc_now())
        for offset, raw in enumerate(items):
            index = base + offset
            try:
                envelope = _envelope(raw, where=f"observations[{index}]")
            except InvalidInput as exc:
                event_id = raw.get("eventId") if isinstance(raw, Mapping) else None
                bulk.failed += 1
                bulk.errors.append(
                    ItemError(index, event_id if isinstance(event_id, str) else None, exc.message)
                )
                continue
            positions.append(index)
            events.append(prepare(envelope, received_at, redactor=self.redactor))
        return positions, (self.store.submit_events(events) if events else None), events

    def _collect(
        self, bulk: BulkResult, positions: list[int], future: Any, events: list[NewEvent]
    ) -> None:
        outcomes = future.result() if future else []
        _record(bulk, positions, outcomes)
        self._turns_ended(events, outcomes)

    def _turns_ended(self, events: list[NewEvent], outcomes: list[AppendOutcome]) -> None:
        """The turn ends a bulk path stored (``/observe/bulk``, the hook spool's drain,
        imports) signal their sessions as ``observe`` does; a repeat signalled when it
        first came."""
        if not self._pipeline_running:
            return
        for event, outcome in zip(events, outcomes, strict=True):
            if (
                event.hook_type in TURN_ENDS
                and isinstance(outcome, AppendResult)
                and not outcome.deduplicated
            ):
                self.pipeline.turn_ended(event.session_id)

    def start_session(self, request: SessionStart | Mapping[str, Any]) -> StartedSession:
        """A host starts a session: make sure it exists (its first event would create it
        too) and give it its board row, once. The Memory Session ID is in the report only
        when the row was verified on disk."""
        if not isinstance(request, SessionStart):
            request = validate(SessionStart, request)
        redact = self.redactor.redact_text
        self.store.ensure_session(
            request.session_id,
            project=redact(request.project),
            cwd=redact(request.cwd),
            agent_id=request.agent_id,
            title=redact(request.title) if request.title else request.title,
        )
        report = self.register_host_session(request.session_id, request.agent_id)
        session = self.store.get_session(request.session_id)
        assert session is not None
        block = self.context(
            project=request.project, session_id=request.session_id, answering="SessionStart"
        )
        return StartedSession(session, report, block.text)

    def record_injection(
        self,
        session_id: str,
        packed: Packed,
        *,
        answering: str | None,
        query: str | None = None,
    ) -> None:
        """Note in the session what a memory block gave its agent: the ids (so the next
        block gives only what is new) and a ``context_injected`` event (what the agent was
        told, for `memvault session show` and the session's events), unless the block
        was only the report line. The event is bookkeeping: it is never injected,
        summarized or learned from."""
        session = self.store.get_session(session_id)
        if session is None:
            return  # no events yet: a block asked for a session memvault does not know
        now = iso(utc_now())
        items = [(b["kind"], b["id"]) for b in packed.blocks if b["kind"] in INJECTED_KINDS]
        self.store.record_injected(session_id, items, now)
        if not packed.items():
            return  # only the report line that memory had nothing: no event for it
        data = {
            "answered": answering or "request",
            "items": [{"kind": kind, "id": item} for kind, item in items],
            "tokens": packed.tokens,
        }
        if query:
            data["query"] = query[:200]
        envelope = Envelope(
            hook_type=INJECTION_HOOK,
            session_id=session_id,
            project=session.project or "-",
            cwd=session.cwd or "-",
            timestamp=now,
            data=data,
            agent_id=session.agent_id,
            event_id=f"{INJECTION_HOOK}-{uuid.uuid4().hex}",
        )
        self.store.submit_events([prepare(envelope, now, redactor=self.redactor)]).result()
        self.nudge_indexer()

    def injections(self, board_session_id: str) -> list[dict[str, Any]]:
        """What the host session of a board row was given, oldest first: for each block,
        when, the host event it answered, its memories (kind and id) and its tokens."""
        link = self.store.board_links().get(board_session_id)
        if link is None:
            return []
        return recent_injections(self.store, link[0], scan=None)[0]

    # -- reads ----------------------------------------------------------------------------

    def session(self, session_id: str) -> Session | None:
        return self.store.get_session(session_id)

    def sessions(
        self, *, limit: int = 100, offset: int = 0, agent_id: str | None = None
    ) -> list[Session]:
        return self.store.list_sessions(limit=limit, offset=offset, agent_id=agent_id)

    def observations(
        self, session_id: str, *, limit: int = 1000, offset: int = 0
    ) -> list[Observation]:
        return self.store.list_observations(session_id, limit=limit, offset=offset)

    def events(self, session_id: str, *, limit: int = 1000, offset: int = 0) -> list[Event]:
        return self.store.list_events(session_id, limit=limit, offset=offset)

    def latest(
        self, *, session_id: str | None = None, project: str | None = None, limit: int = 20
    ) -> Activity | None:
        """What happened lately in a session (a host session id or a Memory Session ID;
        None when it names neither) or in a project: the latest observations, oldest first,
        and the sessions they belong to."""
        if (session_id is None) == (project is None):
            raise InvalidInput("give session_id or project (one of them)")
        if session_id is not None:
            return session_activity(self.store, self.board, session_id, limit)
        assert project is not None
        return project_activity(self.store, self.board, project, limit)

    def timeline(self, session_id: str, *, after: int = 0, limit: int = 200) -> Timeline | None:
        """A page of a session's events with their observations, in arrival order after
        sequence ``after``, its summary, watermarks and board row; None for no session."""
        return session_timeline(self.store, self.board, session_id, after=after, limit=limit)

    # -- the session board ------------------------------------------------------------------

    def agent_for(self, agent_id: str | None) -> str:
        """The board's agent name for a host: ``cursor`` → ``cursor-main-agent``."""
        if not agent_id or not agent_id.strip():
            return self.settings.agent_name
        host = re.sub(r"[^a-z0-9]+", "-", agent_id.strip().lower()).strip("-")[:40].strip("-")
        if not host:
            return self.settings.agent_name
        host = _HOST_ALIASES.get(host, host)
        return host if host.endswith("-agent") else f"{host}-main-agent"

    @vault_write("register_session")
    def register_session(
        self,
        *,
        agent: str | None = None,
        manual: bool = False,
        topic: str | None = None,
        summary: str | None = None,
        keywords: str | None = None,
        content: SnapshotInput = None,
    ) -> Report:
        """Add a board row: idle (as a host's session start does) or, with ``manual``,
        active with a snapshot of ``content``."""
        return self.board.register(
            agent or self.settings.agent_name,
            manual=manual,
            topic=topic,
            summary=summary,
            keywords=keywords,
            content=as_snapshot(content),
        )

    @vault_write("register_host_session")
    def register_host_session(
        self, session_id: str, agent_id: str | None = None, *, from_event: bool = False
    ) -> Report:
        """Give a host session its board row, once; later calls return the same id while
        its row is on the board. A host that starts a session again after its row was
        organized away gets a new one; an event never re-registers a session."""
        with self._registration_lock(session_id):
            known = self.store.get_session(session_id)
            linked = known.board_session_id if known is not None else None
            if linked and (from_event or self._row_exists(linked)):
                self._linked.add(session_id)
                return Report(
                    "register",
                    True,
                    linked,
                    f"Your Memory Session ID is: {linked}",
                    {"existing": True},
                )
            board = self._host_board if from_event else self.board
            report = board.register(self.agent_for(agent_id))
            if report.ok and known is not None:
                self.store.link_board_session(session_id, report.session_id, replacing=linked)
                self._linked.add(session_id)
            elif not report.ok:
                log.warning("no board row for session %s: %s", session_id, report.message)
            return report

    def register_from_event(self, session_id: str, agent_id: str | None) -> None:
        """Background registration after a session's first live event; never raises.
        A session the store already links to a row (whichever replica linked it) needs no
        call; on a standby the call is a hand-over to the vault's owner, so its answer is
        remembered here too."""
        try:
            known = self.store.get_session(session_id)
            if known is not None and known.board_session_id:
                self._linked.add(session_id)
                return
            report = self.register_host_session(session_id, agent_id, from_event=True)
            if report.ok:
                self._linked.add(session_id)
        except Exception:
            log.exception("could not register session %s on the board", session_id)
        finally:
            self._registering.discard(session_id)

    def needs_board_row(self, session_id: str) -> bool:
        """Cheap check for the ingest path: should this event start a registration?"""
        if session_id in self._linked or session_id in self._registering:
            return False
        self._registering.add(session_id)
        return True

    def _row_exists(self, board_session_id: str) -> bool:
        try:
            return self.board.has_row(board_session_id)
        except BoardFormatError:
            return True  # on the board, twice: it exists; organize reports the duplicate

    @vault_write("update_session")
    def update_session(
        self,
        session_id: str,
        content: SnapshotInput,
        *,
        topic: str | None = None,
        summary: str | None = None,
        keywords: str | None = None,
    ) -> Report:
        return self.board.update(
            session_id, as_snapshot(content), topic=topic, summary=summary, keywords=keywords
        )

    @vault_write("continue_session")
    def continue_session(
        self, current: str | None, source: str, *, agent: str | None = None
    ) -> Report:
        return self.board.continue_from(current, source, agent=agent or self.settings.agent_name)

    @vault_write("release_session")
    def release_session(self, current: str, source: str) -> Report:
        return self.board.release(current, source)

    @vault_write("archive_session")
    def archive_session(self, session_id: str, *, force: bool = False) -> Report:
        return self.board.archive(session_id, force=force)

    @vault_write("organize")
    def organize(self, *, dry_run: bool = False, stale_days: int | None = None) -> Report:
        return self.board.organize(
            dry_run=dry_run, stale_days=stale_days or self.settings.stale_days
        )

    def board_rows(self) -> list[BoardRow]:
        """Board rows in reading priority (active and meaningful first), from the file."""
        return self.board.rows()

    def sync_board(self) -> bool:
        """Refresh the store's mirror of the board if ``memory/index.md`` changed (by
        memvault, another tool or a person). Returns whether it did. Only the vault's owner
        does: another replica's folder may not be the vault."""
        if not self.vault_owner.is_owner():
            return False
        with self._sync_lock:
            try:
                stat = self.board.index_path.stat()
                mark = (stat.st_mtime_ns, stat.st_size)
            except FileNotFoundError:
                mark = None
            if mark == self._board_mark:
                return False
            self.store.replace_board_rows(self.board.board().rows if mark else [])
            self._board_mark = mark
            return True

    def board_entry(
        self, session_id: str, *, scan: int | None = INJECTIONS_SCANNED
    ) -> BoardEntry | None:
        """A board row with its snapshot, the rows it continues and what memory gave its
        session (among its latest ``scan`` events; None: all); None when the row is not on
        the board."""
        return board_entry(self.store, self.board, session_id, scan=scan)

    def mirrored_board(self, *, status: str | None = None) -> list[BoardRow]:
        self.sync_board()
        return self.store.board_rows(status=status)

    def _registration_lock(self, session_id: str) -> threading.Lock:
        # A fixed set of locks striped by session: bounded however many sessions come.
        return self._registration_locks[hash(session_id) % len(self._registration_locks)]

    # -- fragments ---------------------------------------------------------------------------

    # Fragment files are written by the vault's owner (``vault_writes``), as board rows are.
    remember = vault_write("remember")(Recall.remember)

    # -- what the pipeline writes: on the vault's owner, whichever process runs the job -------

    @vault_write("remember_derived")
    def remember_derived(self, draft: Draft) -> DerivedFragment:
        """A fragment the pipeline learned, written as ``remember`` writes one, with the
        file's hash before a merge into it and after the write."""
        seen: dict[str, str | None] = {}

        def before_merge(path: Path) -> None:
            seen["before"] = file_sha256(path)

        def after_write(path: Path) -> None:
            seen["after"] = file_sha256(path)

        done = Recall.remember(self, draft, before_merge=before_merge, after_write=after_write)
        return DerivedFragment(
            done.action,
            done.path.relative_to(self.settings.vault_path).as_posix(),
            done.similarity,
            seen.get("before"),
            seen.get("after"),
        )

    @vault_write("update_derived")
    def update_derived(
        self,
        board_session_id: str,
        content: Snapshot,
        *,
        topic: str | None = None,
        derived_summary: str | None = None,
        keywords: str | None = None,
    ) -> Report:
        """A session's summary into its snapshot and row, through the board's merge policy
        (the Summary only while memvault wrote it)."""
        return self.board.update(
            board_session_id,
            content,
            topic=topic,
            derived_summary=derived_summary,
            keywords=keywords,
        )

    def board_row(self, board_session_id: str) -> BoardRow | None:
        """One row of the board: from the file on the vault's owner, from the database's
        mirror of it elsewhere (another process's folder may not be the vault)."""
        if self.vault_owner.is_owner():
            return self.board.board().get(board_session_id)
        return self.store.board_row(board_session_id)

    edit_fragment = vault_write("edit_fragment")(Recall.edit_fragment)
    delete_fragment = vault_write("delete_fragment")(Recall.delete_fragment)
    forget = vault_write("forget")(Recall.forget)
    maintain = vault_write("maintain")(Recall.maintain)

    def check_fragments(self) -> CheckReport:
        """Every fragment file that breaks the fragment rules, and how."""
        folder = self.settings.fragments_path
        if not folder.is_dir():
            return CheckReport()
        return check_folder(folder, root=self.settings.vault_path)

    def health(self) -> Health:
        """ok, degraded (writes fail or lag, with the reasons) or critical (the store
        cannot write at all). Each reason is checked afresh, so it clears by itself."""
        stats = self.store.stats()
        pending = self.store.pending_writes
        live, archived = self.store.fragment_counts()
        reasons: list[str] = []
        stopped = self.store.write_failure
        if stopped is not None:
            reasons.append(f"the store's writer stopped: {stopped!r}")
        trouble = self.store.write_trouble()
        if trouble is not None:
            reasons.append(trouble)
        if pending > WRITE_BACKLOG_LIMIT:
            reasons.append(f"{pending} writes are queued: the store is falling behind")
        owner = self.vault_owner.is_owner()
        queued = self.vault_owner.waiting()
        if self.vault_owner.refusal:
            reasons.append(self.vault_owner.refusal)
        if queued > VAULT_BACKLOG_LIMIT:
            reasons.append(f"{queued} vault writes wait for the replica that owns the vault")
        reasons += _vault_reasons(
            [self.settings.fragments_path, self.settings.vault_path / "memory"]
        )
        status = "critical" if stopped is not None else "degraded" if reasons else "ok"
        return Health(
            status=status,
            version=__version__,
            uptime_seconds=round(time.monotonic() - self._started, 3),
            store=stats,
            pending_writes=pending,
            rss_bytes=_rss_bytes(),
            pid=os.getpid(),
            spooled=len(spool.pending(spool_folder(str(self.settings.home)))),
            reasons=tuple(reasons),
            vault=str(self.settings.vault_path),
            fragments_folder=str(self.settings.fragments_path),
            embedder=self._embedder_state(),
            llm=_llm_state(self.settings, self.__dict__.get("pipeline")),
            board_rows=self.store.board_row_count(),
            fragments=live,
            archived_fragments=archived,
            backlog=self.indexer.backlog(),
            pool=self.store.pool_stats(),
            vault_owner=owner,
            vault_owner_since=self.vault_owner.since,
            vault_writes_queued=queued,
        )

    def _embedder_state(self) -> EmbedderState:
        choice = self.settings.embeddings
        if choice == "none":
            return EmbedderState("none", None, None, False, "MEMVAULT_EMBEDDINGS=none")
        semantic = self.semantic
        if semantic is None:
            return EmbedderState(
                "none", None, None, False, "no local model installed: see memvault doctor"
            )
        provider, _, model = semantic.model.split("@", 1)[0].partition(":")
        if semantic.ready:
            return EmbedderState(provider, model or None, semantic.dim, True)
        reason = f"failed to load: {semantic.failure}" if semantic.failure else "loading"
        return EmbedderState(provider, model or None, None, False, reason)


def _llm_state(settings: Settings, pipeline: Pipeline | None) -> LLMState:
    """The LLM the pipeline opened; without a pipeline here, what the settings ask for."""
    if pipeline is not None and pipeline.llm is not None:
        provider, _, model = pipeline.llm.name.split("@", 1)[0].partition(":")
        return LLMState(provider, model or None)
    if settings.llm == "none":
        return LLMState("none", None, "MEMVAULT_LLM=none")
    if pipeline is None:
        return LLMState(settings.llm, settings.llm_model, "no pipeline runs in this process")
    if settings.llm_url is None and settings.llm_api_key is None:
        return LLMState("none", None, "none configured: summaries are extractive")
    return LLMState("none", None, "configured but not opened: `memvault doctor` says why")


def _vault_reasons(folders: list[Path]) -> list[str]:
    """Why the vault's folders cannot take a write now: read-only, or on a full disk."""
    reasons: list[str] = []
    for folder in folders:
        existing = next((p for p in (folder, *folder.parents) if p.is_dir()), None)
        if existing is None:
            continue
        if not os.access(existing, os.W_OK):
            reasons.append(f"the vault folder {existing} cannot be written")
            continue
        free = shutil.disk_usage(existing).free
        if free < LOW_SPACE_BYTES:
            reasons.append(f"the disk holding {folder} is full ({free // 1024} KiB free)")
    return reasons


def _envelope(value: Envelope | Mapping[str, Any], *, where: str = "") -> Envelope:
    if isinstance(value, Envelope):
        return value
    return validate(Envelope, value, where=where)


def _single(outcomes: list[AppendOutcome]) -> ObserveResult:
    outcome = outcomes[0]
    if isinstance(outcome, AppendFailure):
        raise StoreFailure(f"could not store the event: {outcome.error}")
    return ObserveResult.of(outcome)


def _record(bulk: BulkResult, positions: list[int], outcomes: list[AppendOutcome]) -> None:
    for index, outcome in zip(positions, outcomes, strict=True):
        if isinstance(outcome, AppendFailure):
            bulk.failed += 1
            bulk.errors.append(ItemError(index, outcome.client_event_id, outcome.error))
            continue
        bulk.results[index] = ObserveResult.of(outcome)
        if outcome.deduplicated:
            bulk.deduplicated += 1
        else:
            bulk.imported += 1


def _rss_bytes() -> int | None:
    """Current resident set size of this process."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


class BoardWatcher:
    """Keeps the store's board mirror in step with ``memory/index.md`` while a server runs,
    so edits made in Obsidian or by another agent are seen within a poll interval."""

    def __init__(self, memory: Memory, *, interval: float = 1.0) -> None:
        self.memory = memory
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memvault-board", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.memory.sync_board()
            except Exception:  # a half-edited file, a vault on a drive that went away…
                log.warning("could not read the session board", exc_info=True)
            self._stop.wait(self.interval)
