"""What a server runs beside its requests, the one place that says which: the board
watcher, the indexer, the pipeline's worker (unless ``worker_in_server`` is off), the hook
spool's drain, and the collector that moves full garbage collections to quiet moments."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

from memvault.background import Loop, Pacer, QuietCollector, favour_requests
from memvault.config import Settings
from memvault.ingest.spool import ObserveMany, SpoolDrain, folder_of
from memvault.memory.index import Index
from memvault.memory.pipeline import LazyPipeline
from memvault.vault.owner import VaultOwner

log = logging.getLogger(__name__)


def board_watcher(sync: Callable[[], object], *, interval: float = 1.0) -> Loop:
    """Keeps the store's board mirror in step with ``memory/index.md`` while a server runs,
    so edits made in Obsidian or by another agent are seen within a poll interval."""
    return Loop(
        "memvault-board",
        sync,
        interval=interval,
        # a half-edited file, a vault on a drive that went away…
        failure="could not read the session board",
        logger=log,
    )


@dataclass(eq=False)
class Serving:
    """The server's background threads, started and stopped together."""

    settings: Settings
    pacer: Pacer
    claim: VaultOwner
    index: Index
    pipeline: LazyPipeline
    _: KW_ONLY
    sync_board: Callable[[], object]
    observe_many: ObserveMany
    on_new_session: Callable[[str, str | None], None]
    board_watcher: Loop | None = field(default=None, init=False)
    _spool_drain: SpoolDrain | None = field(default=None, init=False)
    _collector: QuietCollector | None = field(default=None, init=False)
    _serving: bool = field(default=False, init=False)

    def start(self) -> None:
        """Start the threads a server runs; the board watcher and the pipeline run on the
        replica that writes the vault, once it does."""
        favour_requests()
        if self._collector is None:
            self._collector = QuietCollector(self.pacer)
            self._collector.start()
        self._serving = True
        if self.claim.check():  # asked before (a health report): start them now
            self.gained_vault()
        self.claim.start()  # a standby starts them when it takes the vault over
        self.index.start()
        if self._spool_drain is None:
            self._spool_drain = SpoolDrain(
                folder_of(self.settings.home),
                self.observe_many,
                self.on_new_session,
                limit=self.settings.max_body_bytes,
            )
            self._spool_drain.start()

    def stop(self) -> None:
        """Stop what ``start`` (or ``pipeline.start``, ``index.start``) started, feeders
        first: the spool drain, then the worker and the indexer it nudges, then the board
        watcher."""
        if self._spool_drain is not None:
            self._spool_drain.stop()
            self._spool_drain = None
        self._serving = False
        self.pipeline.stop()
        self.index.stop()
        self.claim.stop()  # and the board watcher with it
        if self._collector is not None:
            self._collector.stop()
            self._collector = None

    def start_pipeline(self) -> None:
        """Process captured events in the background (the server does this)."""
        self.pipeline.start()

    def stop_pipeline(self) -> None:
        self.pipeline.stop()

    def run_due_jobs(self) -> int:
        """Queue what is due (sessions past a threshold or gone quiet) and run every job
        queued, here and now; how many ran (``memvault worker --once``)."""
        pipeline = self.pipeline.get()
        pipeline.signals()
        return pipeline.worker.drain()

    @property
    def pipeline_running(self) -> bool:
        return self.pipeline.running

    def gained_vault(self) -> None:
        """This replica writes the vault now: it watches the board for hand edits and runs
        the pipeline (whose summaries and fragments are vault files)."""
        if not self._serving:
            return
        if self.board_watcher is None:
            self.board_watcher = board_watcher(
                self.sync_board, interval=self.settings.board_poll_seconds
            )
            self.board_watcher.start()
        if self.settings.worker_in_server:
            self.pipeline.start()

    def lost_vault(self) -> None:
        self.pipeline.stop()
        if self.board_watcher is not None:
            self.board_watcher.stop()
            self.board_watcher = None
