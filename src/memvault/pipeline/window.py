"""What a run reads: the events past a watermark that a job may take now.

Two things hold a run back. While observations are upgraded by an LLM, an event the
compressor has not reached yet is waited for, so no watermark moves past an upgrade still
to come. And with an LLM, a run takes only the events whose transcript fits the model's
input limit. Either way the run takes the events before the cut and queues itself again
for the rest.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from memvault.config import Settings
from memvault.derive.activity import steps
from memvault.domain import Event, Session, iso, utc_now
from memvault.llm import LLM
from memvault.pipeline.jobs import COMPRESS, queue
from memvault.pipeline.llm_tasks import step_costs
from memvault.store import Store

PROMPT_MARGIN = 400  # estimated tokens kept free beside a run's steps


class Window:
    def __init__(self, store: Store, settings: Settings, llm: LLM | None, *, compressing: bool):
        self.store = store
        self.settings = settings
        self.llm = llm
        self.compressing = compressing

    def ready(self, kind: str, session: Session, events: list[Event]) -> list[Event]:
        """The events a run may take now. While auto-compress is on, an event the compressor
        has not reached yet is waited for until it is ``compress_grace_ms`` old, so no
        watermark moves past an upgrade still to come; the run takes the events before it
        and is queued again for when the grace period ends."""
        if not self.compressing:
            return events
        compressed = session.compressed.seq or 0
        grace = timedelta(milliseconds=self.settings.compress_grace_ms)
        now = utc_now()
        for at, event in enumerate(events):
            arrived = datetime.fromisoformat(event.received_at)
            if event.seq > compressed and arrived > now - grace:
                queue(self.store, kind, session.id, run_after=iso(arrived + grace))
                queue(self.store, COMPRESS, session.id)
                self.store.hurry_job(COMPRESS, session.id)
                return events[:at]
        return events

    def within_input_limit(
        self, kind: str, session_id: str, events: list[Event], reserve: int
    ) -> list[Event]:
        """The events whose transcript fits the LLM's input limit beside ``reserve``
        tokens (at least one event); the run takes those, and the rest is queued for the
        next run, so no watermark moves past a step the model was not shown."""
        if self.llm is None or not events:
            return events
        costs = step_costs(steps(events, self.store.observations_of([e.seq for e in events])))
        room = self.settings.llm_max_input_tokens - reserve - PROMPT_MARGIN
        used = 0
        for at, event in enumerate(events):
            used += costs.get(event.seq, 0)
            if used > room and at > 0:
                queue(self.store, kind, session_id)
                return events[:at]
        return events
