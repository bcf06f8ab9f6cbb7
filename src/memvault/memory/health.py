"""Health: ok, degraded (with the reasons) or critical, and what the server runs with: the
store's counts, the embedder, the LLM, the index's backlog and the vault's owner."""

from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from memvault import __version__
from memvault.config import Settings
from memvault.domain import StoreStats
from memvault.errors import StoreFailure
from memvault.hook import privacy, spool
from memvault.hook.paths import spool_folder
from memvault.memory.cost import Cost, CostReport
from memvault.memory.index import Index
from memvault.memory.pipeline import LazyPipeline
from memvault.pipeline.service import Pipeline
from memvault.search.indexer import Backlog
from memvault.store import Store, store_location
from memvault.store.contract import PurgeRecord
from memvault.vault.owner import VaultOwner
from memvault.vault.sync_conflicts import ConflictCopy, conflict_copies

# Past this many queued writes the writer is falling behind: health says "degraded".
WRITE_BACKLOG_LIMIT = 10_000
# Past this many board and fragment writes waiting for the vault's owner, health says so.
VAULT_BACKLOG_LIMIT = 100
# Less room than this on a vault folder's disk, and the next write may fail.
LOW_SPACE_BYTES = 1024 * 1024
# The store's counts, fragments (live, archived), board rows, search backlog, whether this
# replica owns the vault, and the vault writes waiting for the owner.
_StoreFigures = tuple[StoreStats, tuple[int, int], int, Backlog | None, bool, int]


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
    spool_set_aside: int = 0  # spooled files the server could not take in, kept apart
    spool_set_aside_folder: str = ""
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
    private_projects: tuple[str, ...] = ()  # folders whose hooks record nothing
    purges: int = 0  # purges done (the audit: when and how many, never the text)
    last_purge: PurgeRecord | None = None
    injected: CostReport | None = None  # tokens memory blocks gave agents lately
    # Copies a sync folder left of the board or a snapshot, with what to do (a copy of the
    # board is merged by the server; one still here could not be).
    conflict_copies: tuple[ConflictCopy, ...] = ()


@dataclass(eq=False)
class HealthCheck:
    """The health report, checked afresh each time it is asked."""

    settings: Settings
    store: Store
    index: Index
    claim: VaultOwner
    pipeline: LazyPipeline
    cost: Cost | None = None
    _started: float = field(default_factory=time.monotonic, init=False)

    def report(self) -> Health:
        """ok, degraded (writes fail or lag, or the store is away, with the reasons) or
        critical (the store cannot write at all). Each reason is checked afresh, so it
        clears by itself."""
        reasons: list[str] = []
        try:
            figures = self._store_figures()
        except StoreFailure as exc:  # PostgreSQL away: the report says so, it still answers
            reasons.append(str(exc).removesuffix("; nothing was written"))
            figures = self._store_away()
        stats, (live, archived), board_rows, backlog, owner, queued = figures
        try:
            purges, latest = self.store.purge_audit(limit=1)
            injected = self.cost.report() if self.cost is not None else None
        except StoreFailure:  # away: said once above, from the figures
            purges, latest, injected = 0, [], None
        pending = self.store.pending_writes
        stopped = self.store.write_failure
        if stopped is not None:
            reasons.append(f"the store's writer stopped: {stopped!r}")
        trouble = self.store.write_trouble()
        if trouble is not None:
            reasons.append(trouble)
        if pending > WRITE_BACKLOG_LIMIT:
            reasons.append(f"{pending} writes are queued: the store is falling behind")
        if self.claim.refusal:
            reasons.append(self.claim.refusal)
        if queued > VAULT_BACKLOG_LIMIT:
            reasons.append(f"{queued} vault writes wait for the replica that owns the vault")
        reasons += _vault_reasons(
            [self.settings.fragments_path, self.settings.vault_path / "memory"]
        )
        status = "critical" if stopped is not None else "degraded" if reasons else "ok"
        spooled_in = spool_folder(str(self.settings.home))
        return Health(
            status=status,
            version=__version__,
            uptime_seconds=round(time.monotonic() - self._started, 3),
            store=stats,
            pending_writes=pending,
            rss_bytes=_rss_bytes(),
            pid=os.getpid(),
            spooled=len(spool.pending(spooled_in)),
            spool_set_aside=len(spool.set_aside(spooled_in)),
            spool_set_aside_folder=os.path.join(spooled_in, spool.BAD),
            reasons=tuple(reasons),
            vault=str(self.settings.vault_path),
            fragments_folder=str(self.settings.fragments_path),
            embedder=self._embedder_state(),
            llm=_llm_state(self.settings, self.pipeline.opened),
            board_rows=board_rows,
            fragments=live,
            archived_fragments=archived,
            backlog=backlog,
            pool=self.store.pool_stats(),
            vault_owner=owner,
            vault_owner_since=self.claim.since,
            vault_writes_queued=queued,
            private_projects=tuple(privacy.private_projects(str(self.settings.home))),
            purges=purges,
            last_purge=latest[0] if latest else None,
            injected=injected,
            conflict_copies=tuple(conflict_copies(self.settings.vault_path)),
        )

    def _store_figures(self) -> _StoreFigures:
        """What the report reads of the store: each read may find it away."""
        return (
            self.store.stats(),
            self.store.fragment_counts(),
            self.store.board_row_count(),
            self.index.backlog(),
            self.claim.is_owner(),
            self.claim.waiting(),
        )

    def _store_away(self) -> _StoreFigures:
        """The figures of a store that cannot be read now: none known, but where it is."""
        location = store_location(self.settings.store_url)
        stats = StoreStats(self.store.engine, str(location), 0, 0, 0, 0, 0, 0, 0, 0)
        return stats, (0, 0), 0, None, self.claim.owner, 0

    def _embedder_state(self) -> EmbedderState:
        choice = self.settings.embeddings
        if choice == "none":
            return EmbedderState("none", None, None, False, "MEMVAULT_EMBEDDINGS=none")
        semantic = self.index.semantic
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
