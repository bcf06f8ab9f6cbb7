"""Context: the memory block injected into an agent (``context``: for a task or a project;
``enrich``: for files about to be touched), and the record, in the session, of what each
block gave it, so that the next block gives only what is new."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from memvault.analyzer import kept_tokens
from memvault.config import Settings
from memvault.domain import Session, iso, utc_now
from memvault.errors import InvalidInput, VaultUnwritable
from memvault.ingest import Envelope, Redactor, prepare
from memvault.ingest.envelope import SessionStart, validate
from memvault.language import Strings, strings
from memvault.memory.board import Board
from memvault.memory.index import Index
from memvault.memory.reading import INJECTION_HOOK, recent_injections
from memvault.memory.recall import Recall
from memvault.memory.staleness import FileCheck, current, project_folder
from memvault.memory.standing import GIVEN, owed, standing_memory
from memvault.memory.telling import Decisions, prompt_hits, tellable_observation
from memvault.search import context as packing
from memvault.search import focus
from memvault.search.context import MEMORY_KINDS
from memvault.search.engine import Hit
from memvault.search.query import Query, parse
from memvault.store import Store
from memvault.vault import maintain
from memvault.vault.lifecycle import Report

# How many of each kind a search for a block finds, before the relevance floor and what
# the session was given already leave some out.
CONTEXT_QUOTAS = {"fragment": 8, "summary": 5, "session": 5, "observation": 20}
# The asking session's newest documents, whose prompts (and the session's own document) are
# left out of its request's term counts: a bounded read on the hook path.
OWN_DOCUMENTS = 20
PROMPT_HOOK = "prompt_submit"
ENRICH_LIMIT = 8
ENRICH_QUOTAS = {"fragment": 5, "observation": ENRICH_LIMIT * 4}
# What an injection record lists: the memories given, and the report line.
INJECTED_KINDS = MEMORY_KINDS | {"report"}

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class StartedSession:
    session: Session
    board: Report  # ok with the Memory Session ID, or why there is none
    context: str = ""  # the project's memory block, to inject


@dataclass(eq=False)
class Context:
    """Memory blocks for agents, and what each session was given."""

    settings: Settings
    store: Store
    index: Index
    recall: Recall
    board: Board
    redactor: Redactor
    files: FileCheck = field(default_factory=FileCheck)
    decisions: Decisions = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.decisions = Decisions(self.store, self.index.searcher.lexical.common_among_sessions)

    def start_session(self, request: SessionStart | Mapping[str, Any]) -> StartedSession:
        """A host starts a session: make sure it exists (its first event would create it
        too), give it its board row, once, and the project's memory block. The Memory
        Session ID is in the report only when the row was verified on disk."""
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
        report = self._register(request.session_id, request.agent_id)
        session = self.store.get_session(request.session_id)
        assert session is not None
        block = self.context(
            project=request.project, session_id=request.session_id, answering="SessionStart"
        )
        return StartedSession(session, report, block.text)

    def _register(self, session_id: str, agent_id: str | None) -> Report:
        """The session's board row; while the board's folder cannot be written the agent
        still gets its memory, and the row comes with a later start or event."""
        try:
            return self.board.register_host_session(session_id, agent_id)
        except VaultUnwritable as exc:
            log.warning("session %s started without its board row: %s", session_id, exc)
            return Report("register", False, message=str(exc))

    def context(
        self,
        *,
        project: str | None,
        query: str | None = None,
        budget: int | None = None,
        session_id: str | None = None,
        answering: str | None = None,
    ) -> packing.Packed:
        """The memory block injected into an agent: what passes the relevance floor for
        ``query``, or what matters most in the project when there is no query.

        For a session (``session_id``) the block leaves out the session itself (its
        prompt, its own observations, its board row) and whatever an earlier block of the
        same session already gave, but a decision the request names that only a block
        without a request (the session start's) gave; when nothing is new, the block is
        empty. A request's block for a session that has not had the standing memory since
        it started or was compacted (``standing.owed``) carries it too, after what the
        request is about. Each block given is recorded in the session
        (``record_injection``), with ``answering`` the host event it answered."""
        budget = budget or self.settings.context_tokens
        if budget < 50:
            raise InvalidInput("budget must be at least 50 tokens", fields=["budget"])
        self.index.fresh()
        asked = bool(query and query.strip())
        terms: tuple[str, ...] = ()
        session = self.store.get_session(session_id) if session_id else None
        own_row = session.board_session_id if session is not None else None
        given_by = self.store.injected(session_id) if session_id else {}
        # A block without a request is the standing memory; a request's block carries it
        # too while the session has not had it (its host took no start block, or its
        # conversation was compacted since).
        owes = not asked or (session is not None and owed(given_by))
        given_by.pop(GIVEN, None)
        given = set(given_by)
        retold: set[tuple[str, str]] = set()
        standing: set[str] = set()  # the standing memory's keys, when the block carries it
        if asked:
            assert query is not None
            found = self.index.searcher.find(query, CONTEXT_QUOTAS, project=project)
            terms = found.query.terms
            weights, held = self._reading(found.query, session_id)
            fragments, summaries, observations = prompt_hits(
                [found[kind] for kind in CONTEXT_QUOTAS],
                weights,
                held,
                self._links(),
                session_id=session_id,
                own_row=own_row,
                request=query,
                project=project,
                session_floor=(
                    focus.SESSION_FLOOR
                    if self.index.semantic is None
                    else focus.SESSION_FLOOR_WITH_VECTORS
                ),
            )
            # A decision the request names is told unless a block that answered a request
            # gave it: a session start's standing memory listed it among others, this
            # request is about it. One the floor passes and nothing gave is told by it.
            # Named decisions go before the floor's fragments: the block's budget keeps them.
            passed = {(h.document.kind, h.document.key) for h in fragments}
            shown = {key for key, by_request in given_by.items() if by_request}
            named = self.decisions.named(query, project, session_id, shown | (passed - given))
            told = {(h.document.kind, h.document.key) for h in named}
            retold = told & given
            fragments = [
                *named,
                *(h for h in fragments if (h.document.kind, h.document.key) not in told),
            ]
        else:
            fragments, summaries, observations = [], [], []
        if owes:
            # After what the request is about, each item once.
            more = standing_memory(
                self.store, self.index.weights, project, own_row=own_row, session_id=session_id
            )
            chosen = {h.document.key for h in [*fragments, *summaries]}
            standing = {h.document.key for hits in more for h in hits} - chosen
            fragments += [h for h in more[0] if h.document.key in standing]
            summaries += [h for h in more[1] if h.document.key in standing]
        project_summary = (
            maintain.read_summary(self.settings.fragments_path, project) if project else None
        )
        folder = project_folder(session)  # retired out, gone files marked
        fragments, summaries = (
            self.files.weigh(current(hits), folder, project) for hits in (fragments, summaries)
        )
        found = len(fragments)
        if given:
            untold = given - retold
            fragments, summaries, observations = (
                [h for h in hits if (h.document.kind, h.document.key) not in untold]
                for hits in (fragments, summaries, observations)
            )
            if ("project", f"project:{project or ''}") in given:
                project_summary = None
        packed = packing.pack(
            fragments,
            summaries,
            observations,
            budget=budget,
            project_summary=project_summary,
            project=project,
            words=self.words,
            label="relevant" if asked else "standing",
            standing=standing,
            searched=asked,
            repeated=found > len(fragments),
            terms=terms,
        )
        if asked:
            # Chosen for this task and handed to the agent: a read. (A session start's
            # standing block is the same few fragments every time: not a sign of use.)
            shown = {block["id"] for block in packed.blocks if block["kind"] == "fragment"}
            shown -= standing  # carried along, not chosen for the task
            self.recall.accessed([hit.document for hit in fragments if hit.document.key in shown])
        carried = standing if owes else None
        return self._given(
            packed, session, given, answering=answering, query=query, standing=carried
        )

    def _given(
        self,
        packed: packing.Packed,
        session: Session | None,
        given: set[tuple[str, str]],
        *,
        answering: str | None,
        query: str | None = None,
        standing: set[str] | None = None,
    ) -> packing.Packed:
        """The block as the session gets it: nothing when it holds nothing new (the
        session has its report line already), and recorded when it holds anything. A
        session memvault does not know (no event yet) gets the whole block, unrecorded.
        ``standing``: the keys of the standing memory it carries, when it carries it."""
        if session is None:
            return packed
        if not packed.items() and given:
            if standing is not None:  # all of it given since: had all the same
                self.store.record_injected(session.id, [GIVEN], iso(utc_now()), asked=False)
            return packing.Packed(text="", tokens=0, budget=packed.budget)
        self.record_injection(session, packed, answering=answering, query=query, standing=standing)
        return packed

    @property
    def words(self) -> Strings:
        return strings(self.settings.language)

    def _above_floor(self, query: Query, *found: list[Hit]) -> list[list[Hit]]:
        """Of each list, the hits that pass the relevance floor (``packing.relevant``)."""
        if not any(found):
            return list(found)
        weights, held = self._reading(query)
        return [
            [h for h in hits if packing.relevant(h, packing.covered(weights, held(h)))]
            for hits in found
        ]

    def _reading(
        self, query: Query, session_id: str | None = None
    ) -> tuple[dict[str, float], Callable[[Hit], frozenset[str]]]:
        """``query``'s terms weighed by their rarity in the index (without the asking
        session's own requests, ``_own_terms``), and what the floor reads of a hit
        (``packing.holding``), read once per document."""
        own = self._own_terms(session_id)
        counts, total = self._counts(query.terms, own)
        # The other ways to say a lexicon word of the request weigh it only where no
        # document holds it as the request says it: only those are counted.
        unheld = [c for c in query.concepts if not all(counts.get(t) for t in c.said)]
        if unheld:
            counts |= self._counts(packing.concept_words(unheld), own)[0]
        weights = packing.term_weights(query.terms, counts, total, query.concepts)
        terms: dict[int, frozenset[str]] = {}

        def held(hit: Hit) -> frozenset[str]:
            key = hit.document.id
            if key not in terms:
                terms[key] = packing.holding(packing.own_terms(hit.document), query.concepts)
            return terms[key]

        return weights, held

    def _counts(
        self, terms: Sequence[str], own: Sequence[frozenset[str]]
    ) -> tuple[dict[str, int], int]:
        """How many documents hold each of ``terms``, and how many there are, as if the
        documents whose terms are ``own`` were not among them."""
        counts, total = self.index.searcher.term_frequencies(terms)
        return packing.uncounted(terms, counts, total, own)

    def _own_terms(self, session_id: str | None) -> list[frozenset[str]]:
        """The asking session's requests, to be left out of its request's term counts. A
        host stores the prompt before it asks for the prompt's block, and the prompt may be
        indexed by then or not: counted, a word only the prompt holds (a Chinese pair
        spanning two of its words) would weigh as a word memory holds, and whether a
        session passes the focus would turn on that race. The session's prompts among its
        newest ``OWN_DOCUMENTS`` documents, and its own document (which lists its
        requests), by the terms of their title and body; read and tokenized once per block."""
        if not session_id:
            return []
        return [
            frozenset(kept_tokens(f"{d.title}\n{d.body}"))
            for d in self.store.session_documents(
                session_id, kinds=("observation", "session"), limit=OWN_DOCUMENTS
            )
            if d.kind == "session" or d.meta.get("hookType") == PROMPT_HOOK
        ]

    def _links(self) -> dict[str, str]:
        """Board row → its host session, for every tied session."""
        return {board: host for board, (host, _) in self.store.board_links().items()}

    def enrich(
        self,
        *,
        files: list[str],
        terms: list[str] | None = None,
        project: str | None = None,
        session_id: str | None = None,
        answering: str | None = None,
    ) -> packing.Packed:
        """Memory about files an agent is about to touch: fragments and past errors. For a
        session, only what no earlier block of it gave (see ``context``)."""
        if not files:
            raise InvalidInput("files must name at least one file", fields=["files"])
        names = [PurePosixPath(f.replace("\\", "/")).name for f in files if f.strip()]
        self.index.fresh()
        found = self.index.searcher.find(
            " ".join([*names, *(terms or [])]), ENRICH_QUOTAS, project=project
        )
        # Labelled relevant, so held to the floor as for context; judged without the files'
        # extensions, which every other file of the kind shares.
        judged = parse(" ".join([*(PurePosixPath(name).stem for name in names), *(terms or [])]))
        fragments, related = self._above_floor(judged, found["fragment"], found["observation"])
        errors = [
            hit
            for hit in related
            if hit.document.meta.get("type") == "error"
            and tellable_observation(hit.document, session_id)
        ]
        session = self.store.get_session(session_id) if session_id else None
        fragments = self.files.weigh(current(fragments), project_folder(session), project)
        given = set(self.store.injected(session_id)) if session_id else set()
        if given:
            fragments, errors = (
                [h for h in hits if (h.document.kind, h.document.key) not in given]
                for hits in (fragments, errors)
            )
        packed = packing.pack(
            fragments,
            [],
            errors[:ENRICH_LIMIT],
            budget=min(self.settings.context_tokens, 1000),
            words=self.words,
            searched=True,
        )
        return self._given(packed, session, given, answering=answering, query=found.query.text)

    def record_injection(
        self,
        session: Session,
        packed: packing.Packed,
        *,
        answering: str | None,
        query: str | None = None,
        standing: Collection[str] | None = None,
    ) -> None:
        """Note in the session what a memory block gave its agent: the ids (so the next
        block gives only what is new), each as given for a request or not (the standing
        memory's, ``standing``, never is, and when the block carries it, that it did:
        ``standing.GIVEN``), and a ``context_injected`` event (what the agent was told, for
        `memvault session show` and the session's events), unless the block was only the
        report line. The event is bookkeeping: it is never injected, summarized or learned
        from."""
        session_id = session.id
        now = iso(utc_now())
        items = [(b["kind"], b["id"]) for b in packed.blocks if b["kind"] in INJECTED_KINDS]
        carried = standing or ()
        asked = [i for i in items if i[1] not in carried] if query and query.strip() else []
        rest = [i for i in items if i not in asked] + ([GIVEN] if standing is not None else [])
        self.store.record_injected(session_id, asked, now, asked=True)  # none: no write
        self.store.record_injected(session_id, rest, now, asked=False)
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
        self.index.nudge()

    def compacted(self, session_id: str, at: str) -> None:
        """A host compacted the session's conversation into a summary at ``at``: what its
        blocks gave the agent before then went with it, so the next blocks may give it
        again (Claude Code asks for the session start's block once the compaction is
        done). A compaction that reaches the server late (spooled, imported) leaves what
        was given since as given."""
        self.store.forget_injected(session_id, through=at)

    def injections(self, board_session_id: str) -> list[dict[str, Any]]:
        """What the host session of a board row was given, oldest first: for each block,
        when, the host event it answered, its memories (kind and id) and its tokens."""
        link = self.store.board_links().get(board_session_id)
        if link is None:
            return []
        return recent_injections(self.store, link[0], scan=None)[0]
