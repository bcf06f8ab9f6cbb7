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

The pipeline is handed what it works from (see ``Sources``): the store, the settings, the
session board and the fragment write path. It keeps those parts and never the object that
handed them, so nothing here calls back up into ``Memory``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from memvault.background import Pacer
from memvault.config import Settings
from memvault.derive import cues
from memvault.derive.activity import PROMPT, RESPONSE, Step, steps
from memvault.derive.fragments import extract_fragments
from memvault.derive.summarize import Summary, has_real_work, snapshot_sections, summarize
from memvault.derive.text import substantive
from memvault.domain import BoardRow, Event, Job, Observation, Session, Watermark, iso, utc_now
from memvault.llm import LLM, LLMError, open_llm
from memvault.llm.budget import estimate_tokens
from memvault.pipeline.graph_job import extract_session_graph
from memvault.pipeline.llm_tasks import (
    COMPRESS_SYSTEM,
    FRAGMENT_SYSTEM,
    SUMMARY_SYSTEM,
    compress_block,
    derived_by,
    llm_fragments,
    llm_observations,
    llm_summary,
    step_costs,
)
from memvault.pipeline.worker import Worker
from memvault.store import Store
from memvault.vault.board import UNSET_TOPICS, is_placeholder_keywords
from memvault.vault.fragments import live_fragment_files
from memvault.vault.lifecycle import Report
from memvault.vault.remember import DerivedFragment, Draft, FragmentRefused, Remembered, check_draft
from memvault.vault.snapshot import CONTEXT, Snapshot, as_snapshot

log = logging.getLogger(__name__)

SUMMARIZE = "summarize"
EXTRACT = "extract"
GRAPH = "graph"
GRAPH_FRAGMENTS = "graph-fragments"
COMPRESS = "compress"
COMPRESSED_HOOKS = frozenset({"post_tool_use", "post_tool_failure"})
COMPRESS_BATCH = 20  # tool outcomes per LLM call, at most
GRAPH_EVENTS = 1000  # events per graph run
PROMPT_MARGIN = 400  # estimated tokens kept free beside a run's steps
COMPRESS_EVENTS = 500  # events looked at per compression run
MAX_EVENTS = 20_000  # per run; a longer backlog is summarized over several runs
SIGNALLED_PER_ROUND = 50  # sessions queued per worker round by threshold or idleness
JOBS_KEPT_DAYS = 7


class Sources(Protocol):
    """What the pipeline works from. ``Memory`` is one; the pipeline takes these parts from
    it once and keeps them, not it."""

    @property
    def store(self) -> Store: ...

    @property
    def settings(self) -> Settings: ...

    def remember_derived(self, draft: Draft) -> DerivedFragment:
        """The fragment write path (merge or create, then index and graph the file), run
        by the vault's owner, with the file's hash before a merge and after the write."""
        ...

    def update_derived(
        self,
        board_session_id: str,
        content: Snapshot,
        *,
        topic: str | None = None,
        derived_summary: str | None = None,
        keywords: str | None = None,
    ) -> Report:
        """A summary into a session's snapshot and board row, by the vault's owner."""
        ...

    def board_row(self, board_session_id: str) -> BoardRow | None:
        """A row of the board as it is now."""
        ...

    def graph_fragment(self, path: Path) -> None:
        """Add what a fragment file names to the graph."""
        ...


class Pipeline:
    def __init__(
        self, sources: Sources, *, offline: bool = False, pacer: Pacer | None = None
    ) -> None:
        self.store = sources.store
        self.settings = sources.settings
        # The vault is written by its owner whichever process runs a job: these are handed
        # to it from a `memvault worker` or a standby (``vault_writes``).
        self._write_fragment = sources.remember_derived
        self._update_row = sources.update_derived
        self._board_row = sources.board_row
        self._graph_fragment = sources.graph_fragment
        self._last_sweep = float("-inf")
        self._turns_ended: set[str] = set()
        self._turn_lock = threading.Lock()
        self.llm: LLM | None = None if offline else open_llm(self.settings)
        # While observations are upgraded by an LLM, what reads them waits for the upgrade.
        self.compressing = self.settings.auto_compress and self.llm is not None
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
        # The graph is caught up on its own after a reset (or for a store older than it);
        # otherwise its runs follow each summary.
        for session_id in self.store.sessions_behind_graph(limit=SIGNALLED_PER_ROUND):
            self.store.enqueue_job(GRAPH, {"sessionId": session_id}, dedupe_key=session_id)
        if self.compressing:
            # Compression waits a while after a session's first new event, so one call takes
            # what arrived meanwhile; a run held for the upgrade calls it in at once.
            later = iso(now + timedelta(milliseconds=s.compress_grace_ms / 4))
            for session_id in self.store.sessions_to_compress(limit=SIGNALLED_PER_ROUND):
                self.store.enqueue_job(
                    COMPRESS, {"sessionId": session_id}, dedupe_key=session_id, run_after=later
                )

    # -- work -----------------------------------------------------------------------------

    def _summarize_job(self, job: Job) -> None:
        session_id = str(job.payload.get("sessionId") or "")
        try:
            self.summarize_session(session_id, fallback=self._final(job))
        except Exception:
            # The sweep leaves a failing session alone for a while; its watermark stays.
            self.store.mark_summary_attempt(session_id, iso(utc_now()))
            raise
        # What the session learned, and what it touched, are looked for at the same moments
        # as its summary.
        self.store.enqueue_job(EXTRACT, {"sessionId": session_id}, dedupe_key=session_id)
        self.store.enqueue_job(GRAPH, {"sessionId": session_id}, dedupe_key=session_id)

    def _extract_job(self, job: Job) -> None:
        self.extract_session(str(job.payload.get("sessionId") or ""), fallback=self._final(job))

    def _graph_job(self, job: Job) -> None:
        self.graph_session(str(job.payload.get("sessionId") or ""))

    def regraph_fragments(self) -> bool:
        """Queue one run that adds every fragment file to the graph again (after a reset);
        False when one is already waiting."""
        queued = self.store.enqueue_job(GRAPH_FRAGMENTS, {}, dedupe_key="all")
        self.worker.nudge()
        return queued

    def _graph_fragments_job(self, job: Job) -> None:
        self.graph_fragments()

    def graph_fragments(self) -> int:
        """Every fragment's part of the graph (archived ones and project summaries are
        not fragments of the live graph); a fragment already counted adds nothing."""
        paths = live_fragment_files(self.settings.fragments_path)
        for path in paths:
            self._graph_fragment(path)
        return len(paths)

    def graph_session(self, session_id: str) -> int:
        """Bring the session's part of the entity graph up to date; how many events it
        took (a long backlog takes several runs, each queued by the last)."""
        session = self.store.get_session(session_id)
        if session is None:
            return 0
        events = self.store.events_after(
            session_id, session.graph_extracted.seq or 0, limit=GRAPH_EVENTS
        )
        ready = self._ready(GRAPH, session, events)
        if not ready:
            return 0
        handled = extract_session_graph(
            self.store, session_id, limit=GRAPH_EVENTS, until_seq=ready[-1].seq
        )
        if handled == GRAPH_EVENTS:
            self.store.enqueue_job(GRAPH, {"sessionId": session_id}, dedupe_key=session_id)
        return handled

    def _compress_job(self, job: Job) -> None:
        self.compress_session(str(job.payload.get("sessionId") or ""), give_up=self._final(job))

    def _final(self, job: Job) -> bool:
        """Whether this is a job's last attempt: then an LLM failure falls back to the
        offline pipeline instead of failing again, so a session is never left without
        memory."""
        return job.attempts >= self.worker.max_attempts

    def _ready(self, kind: str, session: Session, events: list[Event]) -> list[Event]:
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
                self.store.enqueue_job(
                    kind,
                    {"sessionId": session.id},
                    dedupe_key=session.id,
                    run_after=iso(arrived + grace),
                )
                self.store.enqueue_job(COMPRESS, {"sessionId": session.id}, dedupe_key=session.id)
                self.store.hurry_job(COMPRESS, session.id)
                return events[:at]
        return events

    def compress_session(self, session_id: str, *, give_up: bool = False) -> int:
        """Upgrade the session's synthetic tool observations with the LLM, a batch per
        call (sized to the input limit), each batch written with the watermark past it;
        how many were upgraded. Events already summarized are not sent. On the last attempt
        after failures (``give_up``), the watermark moves on without upgrades, so nothing
        waits forever."""
        session = self.store.get_session(session_id)
        if session is None or self.llm is None:
            return 0
        summarized = session.summarized
        if (summarized.seq or 0) > (session.compressed.seq or 0):
            # What is summarized is never sent: the watermark catches up at once.
            self.store.upgrade_observations(session_id, [], derived_by="", through=summarized)
        start = max(session.compressed.seq or 0, summarized.seq or 0)
        events = self.store.events_after(session_id, start, limit=COMPRESS_EVENTS)
        if not events:
            return 0
        observations = {o.event_seq: o for o in self.store.observations_of([e.seq for e in events])}
        author = derived_by(self.llm)
        room = self.settings.llm_max_input_tokens - estimate_tokens(COMPRESS_SYSTEM) - PROMPT_MARGIN
        upgraded = 0
        batch: list[tuple[Event, Observation]] = []
        cost = 0
        for at, event in enumerate(events):
            observation = observations.get(event.seq)
            if (
                observation is not None
                and event.hook_type in COMPRESSED_HOOKS
                and observation.derived_by == "synthetic"
            ):
                batch.append((event, observation))
                cost += estimate_tokens(compress_block(len(batch), event, observation))
            following = events[at + 1] if at + 1 < len(events) else None
            if following is not None and len(batch) < COMPRESS_BATCH:
                upcoming = observations.get(following.seq)
                # The batch goes before the next item would take it past the input limit.
                if (
                    upcoming is None
                    or cost + estimate_tokens(compress_block(len(batch) + 1, following, upcoming))
                    <= room
                ):
                    continue
            try:
                upgrades = llm_observations(self.llm, batch) if batch else {}
            except LLMError:
                if not give_up:
                    raise
                log.warning("session %s: observations left as they are", session_id)
                upgrades = {}
            through = Watermark(event.received_at, event.seq)
            if self.store.upgrade_observations(
                session_id, sorted(upgrades.items()), derived_by=author, through=through
            ):
                upgraded += len(upgrades)
            batch, cost = [], 0
        if len(events) == COMPRESS_EVENTS:
            self.store.enqueue_job(COMPRESS, {"sessionId": session_id}, dedupe_key=session_id)
        # Runs held back for these upgrades need not wait out the grace period.
        self.store.hurry_job(SUMMARIZE, session_id)
        self.store.hurry_job(EXTRACT, session_id)
        self.store.hurry_job(GRAPH, session_id)
        return upgraded

    def _within_input_limit(
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
                self.store.enqueue_job(kind, {"sessionId": session_id}, dedupe_key=session_id)
                return events[:at]
        return events

    def extract_session(self, session_id: str, *, fallback: bool = True) -> list[Remembered]:
        """Write what the session's new events are worth remembering as fragments (merged
        into near-duplicates), then move its extraction watermark. A run repeated after a
        crash writes the same facts again, and the merge keeps them once: an LLM's answer
        is kept until the watermark moves, so a repeated run writes that same answer. With
        an LLM, a failed call fails the run unless ``fallback`` lets the offline extractor
        answer. What a person forgot is not written again."""
        session = self.store.get_session(session_id)
        if session is None:
            return []
        events = self.store.events_after(session_id, session.extracted.seq or 0, limit=MAX_EVENTS)
        events = self._ready(EXTRACT, session, events)
        events = self._within_input_limit(
            EXTRACT, session_id, events, estimate_tokens(FRAGMENT_SYSTEM)
        )
        if not events:
            return []
        observations = self.store.observations_of([event.seq for event in events])
        drafts = self._llm_drafts(session, events, observations, fallback=fallback)
        if drafts is None:
            drafts = extract_fragments(events, observations, project=session.project)
        written = [self._remember(draft) for draft in self._writable(drafts)]
        last = events[-1]
        self.store.advance_extraction(session_id, Watermark(last.received_at, last.seq))
        return written

    def _llm_drafts(
        self,
        session: Session,
        events: list[Event],
        observations: list[Observation],
        *,
        fallback: bool,
    ) -> list[Draft] | None:
        """The LLM's fragments for these events (the kept answer of an unfinished earlier
        run first); None when there is no LLM, or it failed and ``fallback`` allows the
        offline extractor."""
        if self.llm is None:
            return None
        through = events[-1].seq
        kept = self.store.kept_result(EXTRACT, session.id, through)
        if kept is not None:
            return [Draft(**draft) for draft in json.loads(kept)]
        try:
            drafts = llm_fragments(
                self.llm, _own_steps(events, observations), observations, project=session.project
            )
        except LLMError:
            if not fallback:
                raise
            log.warning("session %s: fragments extracted offline", session.id)
            return None
        self.store.keep_result(
            EXTRACT, session.id, through, json.dumps([dataclasses.asdict(d) for d in drafts])
        )
        return drafts

    def _writable(self, drafts: list[Draft]) -> list[Draft]:
        """Drafts the write path takes, that say enough to keep (``substantive``), and not
        learned from events whose fragment was forgotten."""
        events = [str(e) for d in drafts for e in d.properties.get("events") or []]
        forgotten = self.store.forgotten_events(events) if events else set()
        kept = []
        for draft in drafts:
            learned_from = {str(e) for e in draft.properties.get("events") or []}
            if learned_from and learned_from <= forgotten:
                continue
            try:
                check_draft(draft)
            except FragmentRefused as refused:
                log.warning("a fragment draft was refused: %s", refused)
                continue
            if not substantive(cues.unlabelled(draft.summary)):
                log.warning("a fragment draft says too little to keep: %r", draft.summary)
                continue
            if cues.is_recall(draft.summary):
                continue  # a decision recalled, learned when it was made

            kept.append(draft)
        return kept

    def _remember(self, draft: Draft) -> Remembered:
        """Write a fragment and note the content the pipeline left in it, so a rebuild
        knows the file is still the pipeline's own. A merge into a file the pipeline did
        not leave as it is (an agent's, a person's, or one edited since) makes no claim on
        it, and drops an old claim. Both hashes are taken under the folder's lock, so a
        write by someone else in between is never taken for the pipeline's."""
        written = self._write_fragment(draft)
        relative = written.path
        ours = written.action == "created" or (
            written.before is not None and self.store.pipeline_fragment(relative) == written.before
        )
        if ours and written.after is not None:
            self.store.record_pipeline_fragment(relative, written.after)
        else:
            self.store.forget_pipeline_fragments([relative])
        return Remembered(written.action, self.settings.vault_path / relative, written.similarity)

    def summarize_session(self, session_id: str, *, fallback: bool = True) -> Summary | None:
        """Bring a session's summary up to date; the new summary, or None if nothing was new.
        With an LLM, a failed call fails the run (the watermark stays) unless ``fallback``
        lets the extractive summarizer answer."""
        session = self.store.get_session(session_id)
        if session is None:
            return None
        stored = self.store.session_summary(session_id)
        watermark = session.summarized.seq or 0
        new = self._ready(
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
            fitted = self._within_input_limit(SUMMARIZE, session_id, everything, reserve)
            if fitted is everything or stored is None:
                events = fitted
            else:
                rebuild = False  # too long to send whole: merged into the stored summary
        if not rebuild:
            reserve = estimate_tokens(SUMMARY_SYSTEM) + estimate_tokens(json.dumps(stored[0]))
            events = self._within_input_limit(SUMMARIZE, session_id, new, reserve)
            new = events
        previous = None if rebuild or stored is None else _summary(stored[0])
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
        unset or registration's placeholders; the Summary only while memvault's), through
        the board's merge policy. A row that is not active (idle, stale) is
        touched only when the new events themselves hold real work. Written before the
        watermark moves, so a crash in between repeats an idempotent merge, never loses
        one."""
        if not board_session_id:
            return
        row = self._board_row(board_session_id)
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
        report = self._update_row(
            board_session_id,
            as_snapshot(sections),
            topic=(summary.topic or None) if topic_unset else None,
            derived_summary=summary.current_context or None,
            keywords=(", ".join(summary.keywords) or None)
            if is_placeholder_keywords(row.keywords)
            else None,
        )
        if not report.ok:
            log.warning("could not update the board row %s: %s", board_session_id, report.message)


# Tools that read memory back (memvault's, agentmemory's): what they return was learned before.
_MEMORY_TOOL = re.compile(r"memvault|agentmemory|(?:^|_)memory_|(?:^|_)recall$", re.IGNORECASE)


def _own_steps(events: list[Event], observations: list[Observation]) -> list[Step]:
    """The steps fragments are learned from: without memory tools' results, and prompts and
    replies without what they only pass on (quoted blocks, memvault's report lines and the
    context block one opens)."""
    recalled = {
        event.seq
        for event in events
        if isinstance(event.payload, dict)
        and _MEMORY_TOOL.search(
            str(event.payload.get("tool_name") or event.payload.get("toolName") or "")
        )
    }
    own = []
    for step in steps(events, observations):
        if step.seq in recalled:
            continue
        if step.role in (PROMPT, RESPONSE):
            step = dataclasses.replace(step, text=cues.own_words(step.text))
        own.append(step)
    return own


def _summary(stored: dict) -> Summary:
    """A stored summary, ignoring fields this version does not know."""
    known = {f.name for f in dataclasses.fields(Summary)}
    return Summary(**{k: v for k, v in stored.items() if k in known})
