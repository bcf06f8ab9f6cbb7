"""Memory's retrieval use cases: search, the three read layers, context, remember, maintain.

``Memory`` inherits these; they are apart only to keep each file about one thing. Public
ids: an observation is ``obs_<seq>``, a session summary its board Session ID, a fragment
its path inside the fragments folder without ``.md`` (``_archive/…`` once archived).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import numpy as np

from memvault.background import Pacer
from memvault.derive.entities import graph_of_fragment
from memvault.domain import DOCUMENT_KINDS, Document, iso, utc_now
from memvault.errors import InvalidInput, StoreUnavailable, VaultUnwritable
from memvault.language import Strings, placeholder_summaries, placeholder_topics, strings
from memvault.search import context as packing
from memvault.search.engine import Hit, Searcher
from memvault.search.indexer import Indexer, IndexWorker
from memvault.search.query import parse
from memvault.search.ranking import Weights, recency
from memvault.search.semantic import Semantic
from memvault.vault import maintain
from memvault.vault.edit import Edit, edit_fragment
from memvault.vault.files import OutsideFolder, inside, memory_lock
from memvault.vault.fragments import PROJECTS, Fragment
from memvault.vault.frontmatter import FrontmatterError
from memvault.vault.remember import (
    Draft,
    FragmentRefused,
    Remembered,
    Similarity,
    facts_from,
    remember,
)

if TYPE_CHECKING:
    from memvault.config import Settings
    from memvault.store import Store

log = logging.getLogger(__name__)

_OBSERVATION_ID = re.compile(r"^obs_\d+$")
ENRICH_LIMIT = 8
# The hook type of memvault's record, in a session, of a memory block it gave the agent.
INJECTION_HOOK = "context_injected"
VAULT_SCAN_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class Entry:
    """L1: one memory, whole."""

    id: str
    document: Document
    body: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ProjectMemory:
    """L2: what a project's memory says beyond one fragment."""

    project: str
    summary: str | None  # the maintained L2 summary, when the project has one
    fragments: list[Document]
    total: int


@dataclass(frozen=True, slots=True)
class Deleted:
    """A fragment deleted: its id, its file (relative to the vault) and its summary."""

    id: str
    path: str
    summary: str


@dataclass(slots=True)
class Maintenance:
    archived: list[str] = field(default_factory=list)
    summarized: list[str] = field(default_factory=list)
    dry_run: bool = False


def open_index(
    settings: Settings, store: Store, *, refresh_board: Callable[[], bool]
) -> tuple[Semantic | None, Indexer, Searcher]:
    """The search index's parts, made of the settings: semantic search (None when off; its
    embedding model loads on first use, or when a server starts indexing, since loading
    takes seconds and a command that never searches by meaning never needs it), the
    indexer that keeps the index current, and the searcher that reads it."""
    semantic = None
    if settings.embeddings != "none":
        from memvault.embeddings import open_embedder

        embedder = open_embedder(settings)
        semantic = Semantic(store, embedder) if embedder is not None else None
    vault = settings.vault_path
    indexer = Indexer(
        store,
        vault=vault,
        fragments=settings.fragments_path,
        sessions=vault / "memory" / "sessions",
        semantic=semantic,
        refresh_board=refresh_board,
    )
    searcher = Searcher(store, weights=_weights(settings), semantic=semantic)
    return semantic, indexer, searcher


def _weights(settings: Settings) -> Weights:
    s = settings
    return Weights(s.weight_relevance, s.weight_importance, s.weight_recency, s.recency_decay)


class Recall:
    settings: Settings
    store: Store
    semantic: Semantic | None
    indexer: Indexer
    searcher: Searcher
    pacer: Pacer
    _index_worker: IndexWorker | None = None
    _vault_scanned: float = float("-inf")

    def sync_board(self) -> bool:  # provided by Memory
        raise NotImplementedError

    # -- the index ------------------------------------------------------------------------

    @property
    def weights(self) -> Weights:
        return _weights(self.settings)

    def start_indexing(self) -> None:
        """Keep the index current in the background (the server does this). The embedding
        model is loaded first: loading it (seconds of imports that hold the interpreter)
        beside live requests would stall them, so a server starts a little later instead."""
        if self._index_worker is None:
            if self.semantic is not None:
                try:
                    self.semantic.warm()
                except Exception:  # search stays lexical; the worker retries later
                    log.warning("the embedding model could not be loaded", exc_info=True)
            self._index_worker = IndexWorker(self.indexer, pacer=self.pacer)
            self._index_worker.start()

    def stop_indexing(self) -> None:
        if self._index_worker is not None:
            self._index_worker.stop()
            self._index_worker = None

    def nudge_indexer(self) -> None:
        """Events were stored: the server's background work gives way for a while, and
        the index is woken to take them in."""
        self.pacer.event_arrived()
        if self._index_worker is not None:
            self._index_worker.nudge()

    def index_now(self, *, vectors: bool = True) -> int:
        """Bring the whole index up to date now (vault scan, observations, and vectors
        unless ``vectors`` is False); how many documents changed."""
        self._vault_scanned = time.monotonic()
        if vectors:
            return self.indexer.catch_up()
        done = self.indexer.scan_vault()
        while step := self.indexer.index_observations():
            done += step
        while step := self.indexer.index_changes():
            done += step
        return done

    def _fresh(self) -> None:
        """Without a background worker (CLI, library use), index what is new first: new
        events always (cheap when there are none), the vault at most every
        ``VAULT_SCAN_SECONDS`` (a scan looks at every file)."""
        if self._index_worker is not None:
            return
        now = time.monotonic()
        if now - self._vault_scanned >= VAULT_SCAN_SECONDS:
            self.indexer.scan_vault()
            self._vault_scanned = time.monotonic()
        while self.indexer.index_observations():
            pass
        while self.indexer.index_changes():
            pass

    # -- L0: search -----------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        project: str | None = None,
        kinds: list[str] | tuple[str, ...] | None = None,
        include_archived: bool = False,
        weights: Weights | None = None,
    ) -> list[Hit]:
        """Memory matching ``query``, best first (L0: titles and summaries)."""
        kinds = _kinds(kinds)
        if not 1 <= limit <= 100:
            raise InvalidInput("limit must be from 1 to 100", fields=["limit"])
        self._fresh()
        hits = self.searcher.search(
            query,
            limit=limit,
            project=project,
            kinds=kinds,
            include_archived=include_archived,
            weights=weights,
        )
        return hits

    def public_id(self, document: Document) -> str:
        if document.kind != "fragment":
            return document.key
        relative = PurePosixPath(document.key).relative_to(
            PurePosixPath(self.settings.fragments_dir)
        )
        return str(relative.with_suffix(""))

    def _document(self, memory_id: str) -> Document | None:
        """The document an id names. A fragment id names a file in the fragments folder and
        a Session ID a snapshot in ``memory/sessions/``: an id that would lead out of its
        folder names no memory, and nothing is looked up for it."""
        if _OBSERVATION_ID.match(memory_id):
            return self.store.document("observation", memory_id)
        sessions = self.settings.vault_path / "memory" / "sessions"
        try:
            inside(self.settings.fragments_path, f"{memory_id}.md")
            inside(sessions, f"{memory_id}.md")
        except OutsideFolder:
            return None
        key = f"{PurePosixPath(self.settings.fragments_dir) / memory_id}.md"
        found = self.store.document("fragment", key)
        if found is not None:
            return found
        return self.store.document("summary", memory_id)

    def _fragment_file(self, document: Document) -> Path:
        """The file of an indexed fragment, checked to be inside the fragments folder."""
        relative = PurePosixPath(document.key).relative_to(
            PurePosixPath(self.settings.fragments_dir)
        )
        try:
            return inside(self.settings.fragments_path, relative)
        except OutsideFolder as exc:
            raise InvalidInput(f"fragment {document.key!r}: {exc}", fields=["memoryId"]) from None

    # -- L1: get --------------------------------------------------------------------------

    def get(self, memory_id: str, *, counted: bool = True) -> Entry | None:
        """One memory whole (L1). A fragment is read from its file, so a hand edit shows.
        A fragment read counts as a use of it (what keeps it from being archived) unless
        ``counted`` is off: a person looking at it in the viewer is not an agent using it."""
        self._fresh()
        document = self._document(memory_id)
        if document is None:
            return None
        if document.kind != "fragment":
            return Entry(self.public_id(document), document, document.body)
        path = self._fragment_file(document)
        try:
            fragment = Fragment.read(path)
        except (OSError, ValueError):
            return None  # the file went away since it was indexed
        if counted:
            self._accessed([document])
        return Entry(self.public_id(document), document, fragment.body.strip(), fragment.properties)

    def _accessed(self, documents: list[Document]) -> None:
        if documents:
            self.store.record_access([(d.kind, d.key) for d in documents], iso(utc_now()))

    # -- L2: a project --------------------------------------------------------------------

    def project_memory(self, project: str, *, limit: int = 50) -> ProjectMemory:
        """The project's L2 summary when it has one, and its fragments, newest first."""
        self._fresh()
        fragments = self.store.list_documents("fragment", project=project, limit=limit)
        total = len(self.store.document_ids(kinds=["fragment"], project=project))
        summary = maintain.read_summary(self.settings.fragments_path, project)
        return ProjectMemory(project, summary, fragments, total)

    # -- context --------------------------------------------------------------------------

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
        same session already gave; when nothing is new, the block is empty. Each block
        given is recorded in the session (``record_injection``), with ``answering`` the
        host event it answered."""
        budget = budget or self.settings.context_tokens
        if budget < 50:
            raise InvalidInput("budget must be at least 50 tokens", fields=["budget"])
        self._fresh()
        asked = bool(query and query.strip())
        if asked:
            assert query is not None
            fragments = self.searcher.search(query, limit=8, project=project, kinds=["fragment"])
            summaries = self.searcher.search(query, limit=5, project=project, kinds=["summary"])
            observations = self.searcher.search(
                query, limit=20, project=project, kinds=["observation"]
            )
            fragments, summaries, observations = (
                self._above_floor(query, hits) for hits in (fragments, summaries, observations)
            )
        else:
            fragments = self._standing(project, "fragment", 8)
            summaries = self._standing(project, "summary", 5)
            observations = []
        project_summary = (
            maintain.read_summary(self.settings.fragments_path, project) if project else None
        )
        own_row = None
        if session_id:
            session = self.store.get_session(session_id)
            own_row = session.board_session_id if session is not None else None
        summaries = [h for h in summaries if _tellable_summary(h.document, own_row)]
        observations = [h for h in observations if _tellable_observation(h.document, session_id)][
            :10
        ]
        given = self.store.injected(session_id) if session_id else set()
        found = len(fragments)
        if given:
            fragments, summaries, observations = (
                [h for h in hits if (h.document.kind, h.document.key) not in given]
                for hits in (fragments, summaries, observations)
            )
            if ("project", f"project:{project or ''}") in given:
                project_summary = None
        packed = packing.pack(
            fragments=fragments,
            summaries=summaries,
            observations=observations,
            budget=budget,
            project_summary=project_summary,
            project=project,
            words=self.words,
            label="relevant" if asked else "standing",
            searched=asked,
            repeated=found > len(fragments),
        )
        if asked:
            # Chosen for this task and handed to the agent: a read. (A session start's
            # standing block is the same few fragments every time: not a sign of use.)
            shown = {block["id"] for block in packed.blocks if block["kind"] == "fragment"}
            self._accessed([hit.document for hit in fragments if hit.document.key in shown])
        return self._given(packed, session_id, given, answering=answering, query=query)

    def _given(
        self,
        packed: packing.Packed,
        session_id: str | None,
        given: set[tuple[str, str]],
        *,
        answering: str | None,
        query: str | None = None,
    ) -> packing.Packed:
        """The block as the session gets it: nothing when it holds nothing new (the
        session has its report line already), and recorded when it holds anything."""
        if not session_id:
            return packed
        if not packed.items() and given:
            return packing.Packed(text="", tokens=0, budget=packed.budget)
        self.record_injection(session_id, packed, answering=answering, query=query)
        return packed

    def record_injection(
        self,
        session_id: str,
        packed: packing.Packed,
        *,
        answering: str | None,
        query: str | None = None,
    ) -> None:  # provided by Memory
        raise NotImplementedError

    @property
    def words(self) -> Strings:
        return strings(self.settings.language)

    def _above_floor(self, query: str, hits: list[Hit]) -> list[Hit]:
        """The hits that pass the relevance floor (``packing.relevant``)."""
        if not hits:
            return hits
        terms = parse(query).terms
        counts, total = self.searcher.term_frequencies(terms)
        weights = packing.term_weights(terms, counts, total)
        return [h for h in hits if packing.relevant(h, packing.matched(weights, h.document))]

    def _standing(self, project: str | None, kind: str, limit: int) -> list[Hit]:
        """Without a query: a project's memories by importance and recency alone."""
        documents = [
            document
            for document in self.store.list_documents(kind, project=project, limit=200)
            # Idle board rows are sessions nobody described yet: nothing to tell.
            if document.meta.get("status") != "idle"
        ]
        now, weights = utc_now(), self.weights
        hits = []
        for document in documents:
            fresh = recency(document.updated_at, now, weights.decay)
            score = weights.score(0.0, document.importance, fresh)
            hits.append(Hit(document, score, 0.0, document.importance, fresh))
        hits.sort(key=lambda hit: hit.score, reverse=True)
        return hits[:limit]

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
        query = " ".join([*names, *(terms or [])])
        self._fresh()
        fragments = self.searcher.search(query, limit=5, project=project, kinds=["fragment"])
        related = self.searcher.search(
            query, limit=ENRICH_LIMIT * 4, project=project, kinds=["observation"]
        )
        # Labelled relevant, so held to the floor as for context; judged without the files'
        # extensions, which every other file of the kind shares.
        judged = " ".join([*(PurePosixPath(name).stem for name in names), *(terms or [])])
        fragments = self._above_floor(judged, fragments)
        errors = [
            hit
            for hit in self._above_floor(judged, related)
            if hit.document.meta.get("type") == "error"
            and _tellable_observation(hit.document, session_id)
        ]
        given = self.store.injected(session_id) if session_id else set()
        if given:
            fragments, errors = (
                [h for h in hits if (h.document.kind, h.document.key) not in given]
                for hits in (fragments, errors)
            )
        packed = packing.pack(
            fragments=fragments,
            summaries=[],
            observations=errors[:ENRICH_LIMIT],
            budget=min(self.settings.context_tokens, 1000),
            words=self.words,
            searched=True,
        )
        return self._given(packed, session_id, given, answering=answering, query=query)

    # -- writing and forgetting -----------------------------------------------------------

    def remember(
        self,
        draft: Draft,
        *,
        threshold: float | None = None,
        before_merge: Callable[[Path], None] | None = None,
        after_write: Callable[[Path], None] | None = None,
    ) -> Remembered:
        """Write a fragment, merged into its project's near-duplicate when there is one
        (semantic similarity when an embedder is configured, lexical otherwise), and index
        it at once.

        Raises ``InvalidInput`` (naming every problem) when the fragment breaks a rule, and
        ``VaultUnwritable`` (naming the folder) when the folder cannot be written (a full
        disk, a read-only folder); nothing is written then. A fragment written while the
        index cannot be is kept (the vault is what is remembered): the index takes it in
        from the vault once it can write again."""
        folder = self.settings.fragments_path
        try:
            done = remember(
                folder,
                draft,
                threshold=self.settings.dedup_threshold if threshold is None else threshold,
                similar=self._similar_measure(),
                before_merge=before_merge,
                after_write=after_write,
            )
        except FragmentRefused as exc:
            raise InvalidInput(str(exc)) from None
        except OSError as exc:
            raise VaultUnwritable.of(folder, exc) from exc
        try:
            self.indexer.index_fragment(done.path)
            self.graph_fragment(done.path)
        except StoreUnavailable as exc:
            log.warning("%s written, not indexed yet: %s", done.path.name, exc)
        return done

    def graph_fragment(self, path: Path) -> None:
        """Add what a fragment file names (files, concepts, errors, a decision) to the
        graph; a fragment already counted adds nothing."""
        try:
            fragment = Fragment.read(path)
        except (OSError, UnicodeDecodeError, FrontmatterError):
            return  # `memvault fragments check` reports files that cannot be read
        fragment_id = path.relative_to(self.settings.fragments_path).with_suffix("").as_posix()
        self.store.write_fragment_graph(graph_of_fragment(fragment_id, fragment))

    def _similar_measure(self) -> Similarity | None:
        """Semantic similarity for dedup, from the fragments' stored vectors (only a
        fragment not embedded yet is embedded now); None (lexical) without a loaded model,
        and lexical again if the model fails."""
        semantic = self.semantic
        if semantic is None or not semantic.ready:
            return None
        vault = self.settings.vault_path

        def measure(text: str, fragments: list[Fragment]) -> list[float] | None:
            try:
                mine = semantic.document_vector(text)
                vectors: list[np.ndarray | None] = []
                for fragment in fragments:
                    key = fragment.path.relative_to(vault).as_posix()
                    document = self.store.document("fragment", key)
                    vectors.append(semantic.vector(document.id) if document else None)
                missing = [i for i, v in enumerate(vectors) if v is None]
                if missing:
                    texts = [
                        _comparable_text(fragments[i].summary, fragments[i].body) for i in missing
                    ]
                    for i, vector in zip(missing, semantic.embed(texts), strict=True):
                        vectors[i] = vector
                return [float(np.dot(mine, vector)) for vector in vectors]
            except Exception:
                log.warning("semantic dedup unavailable, comparing words", exc_info=True)
                return None

        return measure

    def forget(self, memory_id: str) -> Document:
        """Delete a fragment (its file and its index entry). Observations and session
        summaries come from the event log and the board; they are not forgotten here."""
        document = self._document(memory_id)
        if document is None:
            raise InvalidInput(f"no memory {memory_id!r}", fields=["memoryId"])
        if document.kind != "fragment":
            raise InvalidInput(
                f"{memory_id!r} is a {document.kind}; only fragments can be forgotten",
                fields=["memoryId"],
            )
        path = self._fragment_file(document)
        with self.indexer.paused(), memory_lock(self.settings.fragments_path):
            learned_from = _events_of(path)
            path.unlink(missing_ok=True)
            self.store.write_documents(deletes=[("fragment", document.key)])
        # The pipeline does not learn it again from the same events, nor a rebuild.
        self.store.forget_events(learned_from)
        self.store.forget_pipeline_fragments([document.key])
        self.store.forget_graph_source(self.public_id(document))
        if self.semantic is not None:
            self.semantic.remove([document.id])
        return document

    def edit_fragment(self, memory_id: str, edit: Edit) -> Entry:
        """Change a fragment's summary, facts, importance or tags in its file (the truth),
        keeping everything else in it as it is now, hand edits included; index the result
        at once. ``InvalidInput`` naming the id when it names no fragment file, another
        kind of memory, or a path out of the fragments folder, or naming what is wrong
        with the edit; ``VaultUnwritable`` when the folder cannot be written."""
        path = self.fragment_path(memory_id)
        folder = self.settings.fragments_path
        try:
            edit_fragment(folder, path, edit)
        except FragmentRefused as exc:
            raise InvalidInput(f"fragment {memory_id!r} not edited: {exc}") from None
        except FileNotFoundError:
            raise InvalidInput(f"no fragment {memory_id!r}", fields=["memoryId"]) from None
        except OSError as exc:
            raise VaultUnwritable.of(folder, exc) from exc
        try:
            self.indexer.index_fragment(path)
            # What the graph counted from the old facts goes; the new ones are counted.
            self.store.forget_graph_source(memory_id)
            self.graph_fragment(path)
        except StoreUnavailable as exc:
            log.warning("%s edited, not indexed yet: %s", path.name, exc)
        fragment = Fragment.read(path)
        key = path.relative_to(self.settings.vault_path).as_posix()
        document = self.store.document("fragment", key)
        if document is None:  # the index could not take it: the file is what was edited
            raise StoreUnavailable(f"fragment {memory_id!r} was edited but is not indexed yet")
        return Entry(memory_id, document, fragment.body.strip(), fragment.properties)

    def delete_fragment(self, memory_id: str) -> Deleted:
        """Delete a fragment: its file, its index entry, its vectors and what the graph
        counted from it; the pipeline does not learn it again (``forget``). A fragment
        written by hand and not indexed yet is deleted as well. ``InvalidInput`` naming
        the id as ``edit_fragment`` does."""
        path = self.fragment_path(memory_id)
        vault = self.settings.vault_path
        try:
            summary = Fragment.read(path).summary
        except (OSError, UnicodeDecodeError, FrontmatterError):
            summary = ""  # a file that cannot be read is still the person's to delete
        relative = path.relative_to(vault).as_posix()
        if self.store.document("fragment", relative) is None:
            self.indexer.index_fragment(path)
        try:
            if self.store.document("fragment", relative) is None:
                # Not indexable (its frontmatter cannot be read): only the file is there.
                with self.indexer.paused(), memory_lock(self.settings.fragments_path):
                    path.unlink(missing_ok=True)
            else:
                self.forget(memory_id)
        except OSError as exc:
            raise VaultUnwritable.of(self.settings.fragments_path, exc) from exc
        return Deleted(memory_id, relative, summary)

    def fragment_path(self, memory_id: str) -> Path:
        """The file a fragment id names, checked to be a fragment inside the fragments
        folder; ``InvalidInput`` naming the id otherwise."""
        folder = self.settings.fragments_path
        try:
            path = inside(folder, f"{memory_id}.md")
        except OutsideFolder as exc:
            raise InvalidInput(f"fragment {memory_id!r}: {exc}", fields=["memoryId"]) from None
        parts = PurePosixPath(memory_id).parts
        if parts[0] == PROJECTS:
            raise InvalidInput(
                f"{memory_id!r} is a project summary, rewritten by maintenance; only "
                "fragments can be edited or deleted",
                fields=["memoryId"],
            )
        if path.is_file() and not any(part.startswith(".") for part in parts):
            return path
        document = self._document(memory_id)
        if document is not None and document.kind != "fragment":
            kind = {"observation": "an observation", "summary": "a session summary"}
            raise InvalidInput(
                f"{memory_id!r} is {kind.get(document.kind, document.kind)}; only fragments "
                "can be edited or deleted",
                fields=["memoryId"],
            )
        raise InvalidInput(
            f"no fragment {memory_id!r} in {folder.name}/; fragment ids come from search "
            "and a project's memory",
            fields=["memoryId"],
        )

    def memories(
        self,
        *,
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 50,
        offset: int = 0,
    ) -> list[Document]:
        """Fragments, most recently updated first."""
        self._fresh()
        return self.store.list_documents(
            "fragment",
            project=project,
            include_archived=include_archived,
            limit=limit,
            offset=offset,
        )

    # -- maintenance ----------------------------------------------------------------------

    def maintain(self, *, dry_run: bool = False, today: dt.date | None = None) -> Maintenance:
        """Archive unused low-importance fragments; refresh large projects' L2 summaries."""
        s = self.settings
        today = today or dt.date.today()
        folder = s.fragments_path
        self.store.sync()  # reads counted a moment ago decide what is archived
        self.index_now(vectors=False)
        report = Maintenance(dry_run=dry_run)
        by_project: dict[str, list[maintain.Candidate]] = {}
        stale = []
        for document in self._all_fragments():
            try:
                path = self._fragment_file(document)
            except InvalidInput:
                continue  # a key no scan of the fragments folder could have given
            candidate = _candidate(path, document)
            if candidate is None:
                continue
            if maintain.should_archive(
                candidate,
                today=today,
                importance_below=s.archive_importance,
                unused_days=s.archive_days,
            ):
                stale.append(candidate)
            else:
                by_project.setdefault(candidate.project, []).append(candidate)
        if dry_run:
            report.archived = [f"{maintain.ARCHIVE}/{c.path.stem}" for c in stale]
        elif stale:
            moved = maintain.archive(folder, stale)
            vault = s.vault_path
            self.store.move_access(
                "fragment",
                [
                    (a.relative_to(vault).as_posix(), b.relative_to(vault).as_posix())
                    for a, b in moved
                ],
            )
            report.archived = [self._relative(destination) for _, destination in moved]
        for project, candidates in sorted(by_project.items()):
            too_many = len(candidates) > s.summary_threshold
            if too_many and (dry_run or maintain.write_summary(folder, project, candidates, today)):
                report.summarized.append(project)
        if not dry_run:
            self.index_now(vectors=False)
        return report

    def _all_fragments(self) -> list[Document]:
        found, offset = [], 0
        while batch := self.store.list_documents("fragment", limit=1000, offset=offset):
            found += batch
            offset += len(batch)
        return found

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.settings.fragments_path).with_suffix("").as_posix()


def _comparable_text(summary: str, body: str) -> str:
    return "\n".join([summary, *facts_from(body)])


def _kinds(kinds: list[str] | tuple[str, ...] | None) -> list[str]:
    if kinds is None:
        return list(DOCUMENT_KINDS)
    unknown = [kind for kind in kinds if kind not in DOCUMENT_KINDS]
    if unknown or not kinds:
        raise InvalidInput(
            f"kinds must be some of {', '.join(DOCUMENT_KINDS)}; got {kinds!r}", fields=["kinds"]
        )
    return list(kinds)


def _candidate(path: Path, document: Document) -> maintain.Candidate | None:
    day = (document.meta.get("date") or document.updated_at or "")[:10]
    try:
        date = dt.date.fromisoformat(day)
    except ValueError:
        return None
    last_used = date
    if document.last_accessed:
        with contextlib.suppress(ValueError):
            last_used = max(last_used, dt.date.fromisoformat(document.last_accessed[:10]))
    return maintain.Candidate(
        path=path,
        project=document.project or "",
        summary=document.summary,
        importance=document.importance,
        date=day,
        last_used=last_used,
    )


def _events_of(path: Path) -> list[str]:
    """The events a fragment file says it was learned from (its ``events`` property)."""
    try:
        events = Fragment.read(path).properties.get("events")
    except (OSError, UnicodeDecodeError, FrontmatterError):
        return []
    return [str(event) for event in events] if isinstance(events, list) else []


# Observations that are the session's bookkeeping rather than its work: a session starting
# or ending, a turn ending, compaction, notifications, a tool about to run (its result
# follows), and memvault's own record of what it injected.
_UNTOLD_HOOKS = frozenset(
    {
        "session_start",
        "session_end",
        "stop",
        "pre_compact",
        "post_compact",
        "notification",
        "pre_tool_use",
        INJECTION_HOOK,
    }
)


def _tellable_observation(document: Document, session_id: str | None) -> bool:
    """Whether an observation belongs in another block: not the asking session's own (its
    prompt, its steps), not bookkeeping, not the host's own tool calls."""
    if session_id and document.session_id == session_id:
        return False
    if document.meta.get("type") == "host_internal":
        return False
    return document.meta.get("hookType") not in _UNTOLD_HOOKS


def _tellable_summary(document: Document, own_row: str | None) -> bool:
    """Whether a board row belongs in a block: not the asking session's own row, and not a
    placeholder (an idle row nobody described yet, in any language)."""
    if own_row and document.key == own_row:
        return False
    if document.meta.get("status") != "idle":
        return True
    topic = document.title.strip()
    unset = topic in placeholder_topics() or topic.lower() == "untitled" or topic == document.key
    return not (unset or document.summary.strip() in placeholder_summaries())
