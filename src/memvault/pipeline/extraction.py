"""The extraction job: what a session's new events are worth keeping (decisions, lessons,
findings, data), written as fragments through the fragment write path.

It looks at the same new events as the summary, right after it, so sessions where the agent
wrote no fragment are caught up. With an LLM the model proposes the fragments; without one
(or when it fails on a run's last attempt) the offline extractor does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath

from memvault.config import Settings
from memvault.derive import cues
from memvault.derive.fragments import confirmed, extract_fragments, own_steps
from memvault.derive.supersede import DECISION_TAG, Decision, replaced_by, superseded
from memvault.derive.text import substantive
from memvault.domain import Document, Event, Observation, Session, Watermark
from memvault.llm import LLM, LLMError
from memvault.llm.budget import estimate_tokens
from memvault.pipeline.jobs import EXTRACT, MAX_EVENTS
from memvault.pipeline.llm_tasks import FRAGMENT_SYSTEM, llm_fragments
from memvault.pipeline.window import Window
from memvault.search.documents import DECISIONS_READ, decisions
from memvault.store import Store
from memvault.vault.fragments import retired_mark
from memvault.vault.remember import (
    DerivedFragment,
    Draft,
    FragmentRefused,
    Remembered,
    check_draft,
    facts_from,
)

log = logging.getLogger(__name__)


@dataclass
class Extraction:
    """The extraction job over the parts it works from; fragments are written through
    ``write_fragment`` by the vault's owner."""

    store: Store
    settings: Settings
    llm: LLM | None
    window: Window
    write_fragment: Callable[[Draft], DerivedFragment]
    # Mark a fragment superseded by a newer one (older id, newer id), by the vault's owner.
    supersede: Callable[[str, str], bool] | None = None

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
        events = self.window.ready(EXTRACT, session, events)
        events = self.window.within_input_limit(
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
                self.llm, own_steps(events, observations), observations, project=session.project
            )
        except LLMError:
            if not fallback:
                raise
            log.warning("session %s: fragments extracted offline", session.id)
            return None
        self.store.keep_result(
            EXTRACT, session.id, through, json.dumps([asdict(d) for d in drafts])
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
        written = self.write_fragment(draft)
        relative = written.path
        ours = written.action == "created" or (
            written.before is not None and self.store.pipeline_fragment(relative) == written.before
        )
        if ours and written.after is not None:
            self.store.record_pipeline_fragment(relative, written.after)
        else:
            self.store.forget_pipeline_fragments([relative])
        # A decision is checked against the older ones when it is made, and again when a
        # later session confirms it (merged in, held surer): an agent's passing decision
        # retires nothing in force until then.
        confirms = written.action == "merged" and confirmed(draft.confidence)
        if DECISION_TAG in draft.tags and (written.action == "created" or confirms):
            self._supersede(draft, self._fragment_id(relative))
        return Remembered(written.action, self.settings.vault_path / relative, written.similarity)

    def _supersede(self, draft: Draft, draft_id: str) -> None:
        """Mark the project's older decisions this new one replaces, and this one when a
        later decision already read replaces it (``derive.supersede``): sessions reach the
        pipeline in any order (a backlog, an import), and the days decide, not that order."""
        if self.supersede is None or draft.date is None:
            return
        made = Decision(
            draft_id,
            draft.project,
            draft.date,
            draft.summary,
            tuple(draft.facts),
            (DECISION_TAG,),
            draft.confidence,
        )
        found = [self._decision(d) for d in decisions(self.store, draft.project, DECISIONS_READ)]
        known = [d for d in found if d is not None and d.id != draft_id]
        for older_id in superseded(made, known):
            self.supersede(older_id, draft_id)
            log.info("fragment %s superseded by %s", older_id, draft_id)
        later = replaced_by(made, known)
        if later is not None and self.supersede(draft_id, later):
            log.info("fragment %s superseded by %s, read before it", draft_id, later)

    def _decision(self, document: Document) -> Decision | None:
        if retired_mark(document.summary) is not None or not document.meta.get("date"):
            return None
        return Decision(
            self._fragment_id(document.key),
            document.project or "",
            str(document.meta["date"]),
            document.summary,
            tuple(facts_from(document.body)),
            tuple(str(tag) for tag in document.meta.get("tags") or []),
            document.meta.get("confidence"),  # a number or None, as the index reads it
        )

    def _fragment_id(self, key: str) -> str:
        relative = PurePosixPath(key).relative_to(PurePosixPath(self.settings.fragments_dir))
        return relative.with_suffix("").as_posix()
