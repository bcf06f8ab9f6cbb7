"""The signals that queue the pipeline's jobs; signals only queue work, the worker does it.

A session is summarized when a turn ends (``POST /summarize``, a host's stop event), when
it has gathered enough unsummarized observations (so an all-day conversation is not
starved), when it has gone quiet, and by a periodic recovery sweep that catches whatever a
signal missed. A session is never closed: a late event simply makes it due again. The
graph is caught up on its own after a reset, and compression is called in while a
session's observations wait for their upgrade.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from memvault.config import Settings
from memvault.domain import iso, utc_now
from memvault.pipeline.jobs import COMPRESS, GRAPH, GRAPH_FRAGMENTS, SUMMARIZE, queue
from memvault.store import Store

SIGNALLED_PER_ROUND = 50  # sessions queued per worker round by threshold or idleness
JOBS_KEPT_DAYS = 7


class Signals:
    def __init__(self, store: Store, settings: Settings, *, compressing: bool) -> None:
        self.store = store
        self.settings = settings
        self.compressing = compressing
        self._last_sweep = float("-inf")
        self._turns_ended: set[str] = set()
        self._turn_lock = threading.Lock()

    def request_summary(self, session_id: str) -> bool:
        """Queue a summary of the session; False when one is already waiting."""
        return queue(self.store, SUMMARIZE, session_id)

    def regraph_fragments(self) -> bool:
        """Queue one run that adds every fragment file to the graph again; False when one
        is already waiting."""
        return self.store.enqueue_job(GRAPH_FRAGMENTS, {}, dedupe_key="all")

    def turn_ended(self, session_id: str) -> None:
        """Note a turn's end without touching the store, so the ingest path never waits
        for the queue; the next round queues the summary."""
        with self._turn_lock:
            self._turns_ended.add(session_id)

    def round(self) -> None:
        """Every worker round: turn ends, and sessions past the observation threshold or
        idle. On its own timer, the recovery sweep: a few sessions with anything left
        unsummarized, whatever a signal missed; and old finished jobs are pruned."""
        s = self.settings
        with self._turn_lock:
            ended, self._turns_ended = self._turns_ended, set()
        for session_id in ended:
            queue(self.store, SUMMARIZE, session_id)
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
            queue(self.store, SUMMARIZE, session_id)
        # The graph is caught up on its own after a reset (or for a store older than it);
        # otherwise its runs follow each summary.
        for session_id in self.store.sessions_behind_graph(limit=SIGNALLED_PER_ROUND):
            queue(self.store, GRAPH, session_id)
        if self.compressing:
            # Compression waits a while after a session's first new event, so one call takes
            # what arrived meanwhile; a run held for the upgrade calls it in at once.
            later = iso(now + timedelta(milliseconds=s.compress_grace_ms / 4))
            for session_id in self.store.sessions_to_compress(limit=SIGNALLED_PER_ROUND):
                queue(self.store, COMPRESS, session_id, run_after=later)
