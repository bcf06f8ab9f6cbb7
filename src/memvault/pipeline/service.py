"""The pipeline's jobs and signals: turning captured events into session summaries and
fragments.

Signals only queue work; the worker does it. A session is summarized when a turn ends
(``POST /summarize``, a host's stop event), when it has gathered enough unsummarized
observations (so an all-day conversation is not starved), when it has gone quiet, and by a
periodic recovery sweep that catches whatever a signal missed. A session is never closed:
a late event simply makes it due again.

A summary run reads only the events past the session's watermark, merges them into the
stored summary (every ``summary_rebuild_every`` revisions it rebuilds from all events), and
stores the summary with the moved watermark in one transaction. The summary then feeds
the session's board row and snapshot, which are promoted to active only for real work.
After each summary, an extraction run looks at the same new events for what is worth
keeping (decisions, lessons, findings, data) and writes it through the fragment write
path, so sessions where the agent wrote no fragment are caught up.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from datetime import timedelta
from typing import TYPE_CHECKING

from memvault.domain import Event, Job, Watermark, iso, utc_now
from memvault.pipeline.extract import extract_fragments
from memvault.pipeline.summarize import Summary, has_real_work, snapshot_sections, summarize
from memvault.pipeline.worker import Worker
from memvault.vault.board import UNSET_TOPIC
from memvault.vault.remember import Remembered
from memvault.vault.snapshot import CONTEXT

if TYPE_CHECKING:
    from memvault.memory import Memory

log = logging.getLogger(__name__)

SUMMARIZE = "summarize"
EXTRACT = "extract"
MAX_EVENTS = 20_000  # per run; a longer backlog is summarized over several runs
SIGNALLED_PER_ROUND = 50  # sessions queued per worker round by threshold or idleness
JOBS_KEPT_DAYS = 7


class Pipeline:
    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.store = memory.store
        self.settings = memory.settings
        self._last_sweep = float("-inf")
        self._turns_ended: set[str] = set()
        self._turn_lock = threading.Lock()
        self.worker = Worker(
            self.store,
            {SUMMARIZE: self._summarize_job, EXTRACT: self._extract_job},
            on_idle=self.signals,
        )

    # -- signals --------------------------------------------------------------------------

    def request_summary(self, session_id: str) -> bool:
        """Queue a summary of the session (a turn ended, or someone asked); False when one
        is already waiting."""
        queued = self.store.enqueue_job(SUMMARIZE, {"sessionId": session_id}, dedupe_key=session_id)
        self.worker.nudge()
        return queued

    def turn_ended(self, session_id: str) -> None:
        """A host said a turn ended. Noted without touching the store, so the ingest path
        never waits for the queue; the worker queues the summary on its next round."""
        with self._turn_lock:
            self._turns_ended.add(session_id)
        self.worker.nudge()

    def signals(self) -> None:
        """Every worker round: turn ends, and sessions past the observation threshold or
        idle. On its own timer, the recovery sweep: a few sessions with anything left
        unsummarized, whatever a signal missed; and old finished jobs are pruned."""
        s = self.settings
        with self._turn_lock:
            ended, self._turns_ended = self._turns_ended, set()
        for session_id in ended:
            self.store.enqueue_job(SUMMARIZE, {"sessionId": session_id}, dedupe_key=session_id)
        now = utc_now()
        retry_before = iso(now - timedelta(milliseconds=s.sweep_cooldown_ms))
        due = self.store.sessions_to_summarize(
            threshold=s.summary_threshold_observations,
            idle_before=iso(now - timedelta(milliseconds=s.idle_threshold_ms)),
            retry_before=retry_before,
            limit=SIGNALLED_PER_ROUND,
        )
        if time.monotonic() - self._last_sweep >= s.sweep_interval_ms / 1000:
            self._last_sweep = time.monotonic()
            due += self.store.sessions_to_summarize(
                threshold=1,
                idle_before=iso(now),
                retry_before=retry_before,
                limit=s.sweep_max_sessions,
            )
            self.store.prune_jobs(iso(now - timedelta(days=JOBS_KEPT_DAYS)))
        for session_id in dict.fromkeys(due):
            self.store.enqueue_job(SUMMARIZE, {"sessionId": session_id}, dedupe_key=session_id)

    # -- work -----------------------------------------------------------------------------

    def _summarize_job(self, job: Job) -> None:
        session_id = str(job.payload.get("sessionId") or "")
        try:
            self.summarize_session(session_id)
        except Exception:
            # The sweep leaves a failing session alone for a while; its watermark stays.
            self.store.mark_summary_attempt(session_id, iso(utc_now()))
            raise
        # What the session learned is looked for at the same moments as its summary.
        self.store.enqueue_job(EXTRACT, {"sessionId": session_id}, dedupe_key=session_id)

    def _extract_job(self, job: Job) -> None:
        self.extract_session(str(job.payload.get("sessionId") or ""))

    def extract_session(self, session_id: str) -> list[Remembered]:
        """Write what the session's new events are worth remembering as fragments (merged
        into near-duplicates), then move its extraction watermark. A run repeated after a
        crash writes the same facts again, and the merge keeps them once."""
        session = self.store.get_session(session_id)
        if session is None:
            return []
        events = self.store.events_after(session_id, session.extracted.seq or 0, limit=MAX_EVENTS)
        if not events:
            return []
        observations = self.store.observations_of([event.seq for event in events])
        written = [
            self.memory.remember(draft)
            for draft in extract_fragments(events, observations, project=session.project)
        ]
        last = events[-1]
        self.store.advance_extraction(session_id, Watermark(last.received_at, last.seq))
        return written

    def summarize_session(self, session_id: str) -> Summary | None:
        """Bring a session's summary up to date; the new summary, or None if nothing was new."""
        session = self.store.get_session(session_id)
        if session is None:
            return None
        stored = self.store.session_summary(session_id)
        watermark = session.summarized.seq or 0
        new = self.store.events_after(session_id, watermark, limit=MAX_EVENTS)
        if not new:
            return None
        # Every N revisions the summary is rebuilt from all events, when they fit in a run.
        rebuild = stored is None or (
            (stored[1] + 1) % self.settings.summary_rebuild_every == 0
            and session.event_count <= MAX_EVENTS
        )
        events = self.store.events_after(session_id, 0, limit=MAX_EVENTS) if rebuild else new
        previous = None if rebuild or stored is None else Summary(**stored[0])
        observations = self.store.observations_of([event.seq for event in events])
        summary = summarize(events, observations, previous)
        last = events[-1]
        counted = len(observations) + (0 if rebuild else session.summarized_observation_count)
        fresh = new if not rebuild else [e for e in events if e.seq > watermark]
        before = str(stored[0].get("current_context") or "") if stored else ""
        self._feed_board(session.board_session_id, summary, fresh, before)
        written = self.store.write_summary(
            session_id,
            dataclasses.asdict(summary),
            through=Watermark(last.received_at, last.seq),
            observations=counted,
        )
        return summary if written else None

    def _feed_board(
        self,
        board_session_id: str | None,
        summary: Summary,
        fresh: list[Event],
        previous_context: str,
    ) -> None:
        """The snapshot's sections and the row's Summary (its Topic and Keywords only while
        unset), through the board's merge policy. A row that is not active (idle, stale) is
        touched only when the new events themselves hold real work. Written before the
        watermark moves, so a crash in between repeats an idempotent merge, never loses
        one."""
        if not board_session_id:
            return
        row = self.memory.board.board().get(board_session_id)
        if row is None:
            return
        if row.status != "active":
            observations = self.store.observations_of([event.seq for event in fresh])
            if not has_real_work(summarize(fresh, observations)):
                return
        topic_unset = row.topic.strip() in ("", UNSET_TOPIC)
        sections = snapshot_sections(summary)
        context = summary.current_context.strip()
        if previous_context.strip() and previous_context.strip() != context:
            # The pipeline's own earlier context is replaced, not piled up: the merge policy
            # moves it under Superseded / Resolved.
            sections[CONTEXT] = [context, f"[superseded] {previous_context.strip()}"]
        report = self.memory.update_session(
            board_session_id,
            sections,
            topic=(summary.topic or None) if topic_unset else None,
            summary=summary.current_context or None,
            keywords=(", ".join(summary.keywords) or None) if not row.keywords.strip() else None,
        )
        if not report.ok:
            log.warning("could not update the board row %s: %s", board_session_id, report.message)
