"""The summary job: a session's summary brought up to date, and fed to its board row and
snapshot.

A run reads only the events past the session's watermark and merges them into the stored
summary (every ``summary_rebuild_every`` revisions it rebuilds from all events), then
stores the summary with the moved watermark in one transaction. The summary feeds the
session's board row and snapshot, which are promoted to active only for real work.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass

from memvault.config import Settings
from memvault.derive.activity import steps
from memvault.derive.summarize import (
    Summary,
    has_real_work,
    snapshot_sections,
    stored_summary,
    summarize,
)
from memvault.domain import BoardRow, Event, Watermark
from memvault.llm import LLM, LLMError
from memvault.llm.budget import estimate_tokens
from memvault.pipeline.jobs import MAX_EVENTS, SUMMARIZE
from memvault.pipeline.llm_tasks import SUMMARY_SYSTEM, llm_summary
from memvault.pipeline.window import Window
from memvault.store import Store
from memvault.vault.board import UNSET_TOPICS, is_placeholder_keywords
from memvault.vault.lifecycle import Report
from memvault.vault.snapshot import CONTEXT, as_snapshot

log = logging.getLogger(__name__)

# A summary into a session's snapshot and board row (``Sources.update_derived``).
RowUpdate = Callable[..., Report]


@dataclass
class Summaries:
    """The summary job over the parts it works from; the board is written through
    ``update_row`` by the vault's owner."""

    store: Store
    settings: Settings
    llm: LLM | None
    window: Window
    board_row: Callable[[str], BoardRow | None]
    update_row: RowUpdate

    def summarize_session(self, session_id: str, *, fallback: bool = True) -> Summary | None:
        """Bring a session's summary up to date; the new summary, or None if nothing was new.
        With an LLM, a failed call fails the run (the watermark stays) unless ``fallback``
        lets the extractive summarizer answer."""
        session = self.store.get_session(session_id)
        if session is None:
            return None
        stored = self.store.session_summary(session_id)
        watermark = session.summarized.seq or 0
        new = self.window.ready(
            SUMMARIZE, session, self.store.events_after(session_id, watermark, limit=MAX_EVENTS)
        )
        if not new:
            return None
        # Every N revisions the summary is rebuilt from all events, when they fit in a run
        # (and, with an LLM, in its input limit).
        rebuild = stored is None or (
            (stored[1] + 1) % self.settings.summary_rebuild_every == 0
            and session.event_count <= MAX_EVENTS
        )
        events = new
        if rebuild:
            everything = self.store.events_after(session_id, 0, limit=MAX_EVENTS)
            everything = [e for e in everything if e.seq <= new[-1].seq]
            reserve = estimate_tokens(SUMMARY_SYSTEM)
            fitted = self.window.within_input_limit(SUMMARIZE, session_id, everything, reserve)
            if fitted is everything or stored is None:
                events = fitted
            else:
                rebuild = False  # too long to send whole: merged into the stored summary
        if not rebuild:
            reserve = estimate_tokens(SUMMARY_SYSTEM) + estimate_tokens(json.dumps(stored[0]))
            events = self.window.within_input_limit(SUMMARIZE, session_id, new, reserve)
            new = events
        previous = None if rebuild or stored is None else stored_summary(stored[0])
        observations = self.store.observations_of([event.seq for event in events])
        summary = summarize(events, observations, previous)
        if self.llm is not None:
            try:
                summary = llm_summary(
                    self.llm, steps(events, observations), previous, summary, observations
                )
            except LLMError:
                if not fallback:
                    raise
                log.warning("session %s: summarized offline", session_id)
        last = events[-1]
        counted = len(observations) + (0 if rebuild else session.summarized_observation_count)
        fresh = new if not rebuild else [e for e in events if e.seq > watermark]
        before = str(stored[0].get("current_context") or "") if stored else ""
        lived = session.last_event_at or last.occurred_at
        self._feed_board(session.board_session_id, summary, fresh, before, lived)
        written = self.store.write_summary(
            session_id,
            asdict(summary),
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
        lived: str,
    ) -> None:
        """The snapshot's sections and the row's Summary (its Topic and Keywords only while
        unset or registration's placeholders; the Summary only while memvault's), through
        the board's merge policy. A row that is not active (idle, stale) is
        touched only when the new events themselves hold real work. The row is updated as
        of ``lived``, the session's last event: a history summarized after it was lived is
        dated as it was lived. Written before the watermark moves, so a crash in between
        repeats an idempotent merge, never loses one."""
        if not board_session_id:
            return
        row = self.board_row(board_session_id)
        if row is None:
            return
        if row.status != "active":
            observations = self.store.observations_of([event.seq for event in fresh])
            if not has_real_work(summarize(fresh, observations)):
                return
        topic_unset = row.topic.strip() in UNSET_TOPICS  # any language's placeholder
        sections = snapshot_sections(summary)
        context = summary.current_context.strip()
        if row.summary.strip() == context:
            del sections[CONTEXT]  # said already (a rebuild, a repeated run): not again
        elif previous_context.strip() and previous_context.strip() != context:
            # The pipeline's own earlier context is replaced, not piled up: the merge policy
            # moves it under Superseded / Resolved.
            sections[CONTEXT] = [context, f"[superseded] {previous_context.strip()}"]
        report = self.update_row(
            board_session_id,
            as_snapshot(sections),
            topic=(summary.topic or None) if topic_unset else None,
            derived_summary=summary.current_context or None,
            keywords=(", ".join(summary.keywords) or None)
            if is_placeholder_keywords(row.keywords)
            else None,
            lived=lived,
        )
        if not report.ok:
            log.warning("could not update the board row %s: %s", board_session_id, report.message)
