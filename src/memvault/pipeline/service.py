"""The pipeline put together: its jobs, the signals that queue them, and the worker that
runs them, over the parts it is handed.

Signals only queue work (``signals``); the worker runs one job at a time (``worker``).
After each summary (``summaries``), an extraction run (``extraction``) looks at the same
new events for what is worth keeping, and a graph run (``graph_job``) for what they name;
while an LLM upgrades observations (``compression``), what reads them waits (``window``).

The pipeline is handed what it works from (see ``Sources``): the store, the settings, the
session board and the fragment write path. It keeps those parts and never the object that
handed them, so nothing here calls back up into ``Memory``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memvault.background import Pacer
from memvault.config import Settings
from memvault.derive.summarize import Summary
from memvault.domain import BoardRow, Job, iso, utc_now
from memvault.llm import LLM, open_llm
from memvault.pipeline import compression, graph_job
from memvault.pipeline.extraction import Extraction
from memvault.pipeline.jobs import (
    COMPRESS,
    EXTRACT,
    GRAPH,
    GRAPH_FRAGMENTS,
    SUMMARIZE,
    queue,
    session_of,
)
from memvault.pipeline.signals import Signals
from memvault.pipeline.summaries import RowUpdate, Summaries
from memvault.pipeline.window import Window
from memvault.pipeline.worker import Worker
from memvault.store import Store
from memvault.vault.remember import DerivedFragment, Draft, Remembered


@dataclass(frozen=True, slots=True)
class Sources:
    """What the pipeline works from: the store, the settings, and the bound methods that
    write the vault, run by the vault's owner whichever process runs a job. ``Memory``
    hands its parts' methods in; the pipeline keeps these, not it."""

    store: Store
    settings: Settings
    # The fragment write path (merge or create, then index and graph the file), with the
    # file's hash before a merge and after the write.
    remember_derived: Callable[[Draft], DerivedFragment]
    # A summary into a session's snapshot and board row.
    update_derived: RowUpdate
    # A row of the board as it is now.
    board_row: Callable[[str], BoardRow | None]
    # Add what a fragment file names to the graph.
    graph_fragment: Callable[[Path], None]
    # Mark an older fragment superseded by a newer one (their ids).
    supersede: Callable[[str, str], bool] | None = None
    # Observations were rewritten in place (an LLM's compression): the search index is
    # woken to read them again, not left to its safety-net timer.
    rewritten: Callable[[], None] | None = None

    def open(self, *, offline: bool = False, pacer: Pacer | None = None) -> Pipeline:
        return Pipeline(self, offline=offline, pacer=pacer)


class Pipeline:
    def __init__(
        self, sources: Sources, *, offline: bool = False, pacer: Pacer | None = None
    ) -> None:
        self.store = sources.store
        self.settings = sources.settings
        self.llm: LLM | None = None if offline else open_llm(self.settings)
        # While observations are upgraded by an LLM, what reads them waits for the upgrade.
        self.compressing = self.settings.auto_compress and self.llm is not None
        self.window = Window(self.store, self.settings, self.llm, compressing=self.compressing)
        # The vault is written by its owner whichever process runs a job: these writes are
        # handed to it from a `memvault worker` or a standby (``vault_writes``).
        self._graph_fragment = sources.graph_fragment
        self._rewritten = sources.rewritten
        parts = (self.store, self.settings, self.llm, self.window)
        self.summaries = Summaries(
            *parts, board_row=sources.board_row, update_row=sources.update_derived
        )
        self.extraction = Extraction(
            *parts, write_fragment=sources.remember_derived, supersede=sources.supersede
        )
        self._signals = Signals(self.store, self.settings, compressing=self.compressing)
        handlers = {
            SUMMARIZE: self._summarize_job,
            EXTRACT: self._extract_job,
            GRAPH: self._graph_job,
            GRAPH_FRAGMENTS: self._graph_fragments_job,
        }
        if self.compressing:
            handlers[COMPRESS] = self._compress_job
        self.worker = Worker(
            self.store,
            handlers,
            on_idle=self.signals,
            lease_seconds=self.settings.job_lease_seconds,
            pacer=pacer,
        )

    def close(self) -> None:
        if self.llm is not None:
            self.llm.close()

    # -- signals --------------------------------------------------------------------------

    def request_summary(self, session_id: str) -> bool:
        """Queue a summary of the session (a turn ended, or someone asked); False when one
        is already waiting."""
        return self._nudged(self._signals.request_summary(session_id))

    def turn_ended(self, session_id: str) -> None:
        """A host said a turn ended. Noted without touching the store, so the ingest path
        never waits for the queue; the worker queues the summary on its next round."""
        self._signals.turn_ended(session_id)
        self.worker.nudge()

    def regraph_fragments(self) -> bool:
        """Queue one run that adds every fragment file to the graph again (after a reset);
        False when one is already waiting."""
        return self._nudged(self._signals.regraph_fragments())

    def _nudged(self, queued: bool) -> bool:
        """Wake the worker for what was just queued."""
        self.worker.nudge()
        return queued

    def signals(self) -> None:
        """Every worker round: the sessions that are due queued (``Signals.round``)."""
        self._signals.round()

    # -- jobs -----------------------------------------------------------------------------

    def _summarize_job(self, job: Job) -> None:
        session_id = session_of(job)
        try:
            self.summarize_session(session_id, fallback=self._final(job))
        except Exception:
            # The sweep leaves a failing session alone for a while; its watermark stays.
            self.store.mark_summary_attempt(session_id, iso(utc_now()))
            raise
        # What the session learned, and what it touched, are looked for at the same moments
        # as its summary.
        queue(self.store, EXTRACT, session_id)
        queue(self.store, GRAPH, session_id)

    def _extract_job(self, job: Job) -> None:
        self.extract_session(session_of(job), fallback=self._final(job))

    def _graph_job(self, job: Job) -> None:
        self.graph_session(session_of(job))

    def _graph_fragments_job(self, job: Job) -> None:
        self.graph_fragments()

    def _compress_job(self, job: Job) -> None:
        self.compress_session(session_of(job), give_up=self._final(job))

    def _final(self, job: Job) -> bool:
        """Whether this is a job's last attempt: then an LLM failure falls back to the
        offline pipeline instead of failing again, so a session is never left without
        memory."""
        return job.attempts >= self.worker.max_attempts

    # -- runs (the jobs' work, also run directly by a rebuild) ----------------------------

    def summarize_session(self, session_id: str, *, fallback: bool = True) -> Summary | None:
        """Bring a session's summary up to date (``Summaries.summarize_session``)."""
        return self.summaries.summarize_session(session_id, fallback=fallback)

    def extract_session(self, session_id: str, *, fallback: bool = True) -> list[Remembered]:
        """Write what the session's new events are worth remembering as fragments
        (``Extraction.extract_session``)."""
        return self.extraction.extract_session(session_id, fallback=fallback)

    def compress_session(self, session_id: str, *, give_up: bool = False) -> int:
        """Upgrade the session's synthetic tool observations with the LLM
        (``compression.compress_session``); how many were upgraded. The search index is
        told of the rewrite at once."""
        upgraded = compression.compress_session(
            self.store, self.settings, self.llm, session_id, give_up=give_up
        )
        if upgraded and self._rewritten is not None:
            self._rewritten()
        return upgraded

    def graph_session(self, session_id: str) -> int:
        """Bring the session's part of the entity graph up to date; how many events it
        took (``graph_job.graph_session``)."""
        return graph_job.graph_session(self.store, self.window, session_id)

    def graph_fragments(self) -> int:
        """Add every live fragment's part to the graph; how many fragments."""
        return graph_job.graph_fragments(self.settings.fragments_path, self._graph_fragment)
