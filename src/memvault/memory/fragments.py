"""Fragments: writing one (merged into a near-duplicate), editing, deleting and forgetting
one, listing them, and maintenance (archiving the unused, summarizing large projects).

Fragment files are written by the vault's owner, as board rows are: each write runs
through ``VaultWrites`` (``memory/owner.py``), in place on the owner and handed to it
elsewhere; ``vault_writes`` is the table of this part's writes by kind.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import numpy as np

from memvault.config import Settings
from memvault.derive.entities import graph_of_fragment
from memvault.domain import Document
from memvault.errors import InvalidInput, StoreUnavailable, VaultUnwritable
from memvault.memory.index import Index
from memvault.memory.owner import vault_write, vault_writes
from memvault.memory.recall import Entry, Recall
from memvault.store import Store
from memvault.vault import maintain
from memvault.vault.edit import Edit, edit_fragment
from memvault.vault.files import OutsideFolder, file_sha256, inside, memory_lock
from memvault.vault.fragments import PROJECTS, CheckReport, Fragment, check_folder
from memvault.vault.frontmatter import FrontmatterError
from memvault.vault.remember import (
    DerivedFragment,
    Draft,
    FragmentRefused,
    Remembered,
    Similarity,
    facts_from,
    remember,
)
from memvault.vault.supersede import mark_superseded

if TYPE_CHECKING:
    from memvault.memory.owner import VaultWrites

log = logging.getLogger(__name__)

# The longest file name the common filesystems take (ext4, APFS, NTFS: 255).
NAME_MAX = 255


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


@dataclass(eq=False)
class Fragments:
    """The fragments of the vault, written by its owner."""

    settings: Settings
    store: Store
    index: Index
    recall: Recall
    writes: VaultWrites

    def vault_writes(self) -> dict[str, Callable[..., Any]]:
        """This part's vault writes by kind, as the owner runs them for another replica."""
        return {
            **vault_writes(self),
            "remember": self._remember,
            "edit_fragment": lambda *args, **kwargs: self._edit_fragment(*args, **kwargs).id,
            "forget": lambda *args, **kwargs: self._forget(*args, **kwargs) and None,
            "maintain": self._maintain,
        }

    # -- the writes, on the owner or handed to it ------------------------------------------

    def remember(
        self, draft: Draft, *, threshold: float | None = None, supersedes: str | None = None
    ) -> Remembered:
        """Write a fragment (``_remember``); with ``supersedes``, mark the older one it
        replaces (checked before anything is written)."""
        if supersedes is not None:
            self.fragment_path(supersedes, field="supersedes")
        kwargs = {} if threshold is None else {"threshold": threshold}
        done = self.writes.run("remember", self._remember, draft, **kwargs)
        newer = self._relative(done.path)
        if supersedes is not None and newer != supersedes:  # not merged into the older one
            self.supersede(supersedes, newer)
        return done

    def edit_fragment(self, memory_id: str, edit: Edit, *, supersedes: str | None = None) -> Entry:
        """Change a fragment's file and index it (``_edit_fragment``); with ``supersedes``,
        mark the older fragment it replaces (the edit may then be empty)."""
        if supersedes is not None:
            self.fragment_path(supersedes, field="supersedes")
            if supersedes == memory_id:
                raise InvalidInput("a fragment cannot supersede itself", fields=["supersedes"])
        if supersedes is None or not edit.empty:
            if self.writes.is_owner():
                self._edit_fragment(memory_id, edit)
            else:
                self.writes.forward("edit_fragment", (memory_id, edit), {})
        else:
            self.fragment_path(memory_id)
        if supersedes is not None:
            self.supersede(supersedes, memory_id)
        entry = self.recall.get(memory_id, counted=False)  # read here as the owner would
        if entry is None:
            raise StoreUnavailable(f"fragment {memory_id!r} was edited but is not indexed yet")
        return entry

    @vault_write
    def supersede(self, older_id: str, newer_id: str) -> bool:
        """Mark ``older_id`` superseded by ``newer_id`` in its file and index it again: it
        is no longer injected as current. False when it said so already."""
        path = self.fragment_path(older_id, field="supersedes")
        self.fragment_path(newer_id)
        try:
            marked = mark_superseded(self.settings.fragments_path, path, newer_id)
        except FragmentRefused as exc:
            raise InvalidInput(f"fragment {older_id!r} not marked: {exc}") from None
        except OSError as exc:
            raise VaultUnwritable.of(self.settings.fragments_path, exc) from exc
        try:
            self.index.indexer.index_fragment(path)
        except StoreUnavailable as exc:
            log.warning("%s marked superseded, not indexed yet: %s", path.name, exc)
        return marked

    def forget(self, memory_id: str) -> Document:
        """Delete a fragment's file and index entry (see ``_forget``)."""
        if self.writes.is_owner():
            return self._forget(memory_id)
        # The answer is the document as it was: read it while it is there.
        before = self.recall.get(memory_id, counted=False)
        forgotten = self.writes.forward("forget", (memory_id,), {})
        return before.document if before is not None else forgotten

    def maintain(self, *, dry_run: bool = False, today: dt.date | None = None) -> Maintenance:
        """Archive unused fragments, refresh large projects' summaries (``_maintain``)."""
        kwargs: dict[str, Any] = {"dry_run": dry_run}
        if today is not None:
            kwargs["today"] = today
        return self.writes.run("maintain", self._maintain, **kwargs)

    # -- in place ----------------------------------------------------------------------------

    def _remember(
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
            self.index.indexer.index_fragment(done.path)
            self.graph_fragment(done.path)
        except StoreUnavailable as exc:
            log.warning("%s written, not indexed yet: %s", done.path.name, exc)
        return done

    def index_fragment(self, path: Path) -> None:
        """Index a fragment file written outside this part (a restored archive's)."""
        self.index.indexer.index_fragment(path)

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
        """Semantic similarity for dedup, from the fragments' stored vectors; a fragment
        not embedded yet (the background works through a backlog in order) is embedded
        here, once, and kept in the embedder's document cache for the drafts after it.
        None (lexical) without a loaded model, and lexical again if the model fails."""
        semantic = self.index.semantic
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
                for i, vector in enumerate(vectors):
                    if vector is None:  # not embedded yet: once, then from the cache
                        summary, body = fragments[i].summary, fragments[i].body
                        vectors[i] = semantic.document_vector(_comparable_text(summary, body))
                return [float(np.dot(mine, vector)) for vector in vectors]
            except Exception:
                log.warning("semantic dedup unavailable, comparing words", exc_info=True)
                return None

        return measure

    def _forget(self, memory_id: str) -> Document:
        """Delete a fragment (its file and its index entry). Observations and session
        summaries come from the event log and the board; they are not forgotten here."""
        document = self.recall.document(memory_id)
        if document is None:
            raise InvalidInput(f"no memory {memory_id!r}", fields=["memoryId"])
        if document.kind != "fragment":
            raise InvalidInput(
                f"{memory_id!r} is a {document.kind}; only fragments can be forgotten",
                fields=["memoryId"],
            )
        path = self.recall.fragment_file(document)
        with self.index.indexer.paused(), memory_lock(self.settings.fragments_path):
            learned_from = _events_of(path)
            path.unlink(missing_ok=True)
            self.store.write_documents(deletes=[("fragment", document.key)])
        # The pipeline does not learn it again from the same events, nor a rebuild.
        self.store.forget_events(learned_from)
        self.store.forget_pipeline_fragments([document.key])
        self.store.forget_graph_source(self.recall.public_id(document))
        if self.index.semantic is not None:
            self.index.semantic.remove([document.id])
        return document

    def _edit_fragment(self, memory_id: str, edit: Edit) -> Entry:
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
            self.index.indexer.index_fragment(path)
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

    @vault_write
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
            self.index.indexer.index_fragment(path)
        try:
            if self.store.document("fragment", relative) is None:
                # Not indexable (its frontmatter cannot be read): only the file is there.
                with self.index.indexer.paused(), memory_lock(self.settings.fragments_path):
                    path.unlink(missing_ok=True)
            else:
                self.forget(memory_id)
        except OSError as exc:
            raise VaultUnwritable.of(self.settings.fragments_path, exc) from exc
        return Deleted(memory_id, relative, summary)

    def fragment_path(self, memory_id: str, *, field: str = "memoryId") -> Path:
        """The file a fragment id names, checked to be a fragment inside the fragments
        folder; ``InvalidInput`` naming the id (and ``field``) otherwise."""
        folder = self.settings.fragments_path
        parts = PurePosixPath(memory_id).parts
        if not parts or any(len(part.encode()) + len(".md") > NAME_MAX for part in parts):
            raise InvalidInput(
                f"fragment {memory_id[:80]!r}: not a fragment id (a fragment id names a file "
                f"in {folder.name}/, each part at most {NAME_MAX - len('.md')} bytes)",
                fields=[field],
            )
        try:
            path = inside(folder, f"{memory_id}.md")
        except OutsideFolder as exc:
            raise InvalidInput(f"fragment {memory_id!r}: {exc}", fields=[field]) from None
        if parts[0] == PROJECTS:
            raise InvalidInput(
                f"{memory_id!r} is a project summary, rewritten by maintenance; only "
                "fragments can be edited or deleted",
                fields=[field],
            )
        if path.is_file() and not any(part.startswith(".") for part in parts):
            return path
        document = self.recall.document(memory_id)
        if document is not None and document.kind != "fragment":
            kind = {"observation": "an observation", "summary": "a session summary"}
            raise InvalidInput(
                f"{memory_id!r} is {kind.get(document.kind, document.kind)}; only fragments "
                "can be edited or deleted",
                fields=[field],
            )
        raise InvalidInput(
            f"no fragment {memory_id!r} in {folder.name}/; fragment ids come from search "
            "and a project's memory",
            fields=[field],
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
        self.index.fresh()
        return self.store.list_documents(
            "fragment",
            project=project,
            include_archived=include_archived,
            limit=limit,
            offset=offset,
        )

    # -- maintenance ----------------------------------------------------------------------

    def _maintain(self, *, dry_run: bool = False, today: dt.date | None = None) -> Maintenance:
        """Archive unused low-importance fragments; refresh large projects' L2 summaries."""
        s = self.settings
        today = today or dt.date.today()
        folder = s.fragments_path
        self.store.sync()  # reads counted a moment ago decide what is archived
        self.index.index_now(vectors=False)
        report = Maintenance(dry_run=dry_run)
        by_project: dict[str, list[maintain.Candidate]] = {}
        stale = []
        for document in self._all_fragments():
            try:
                path = self.recall.fragment_file(document)
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
            self.index.index_now(vectors=False)
        return report

    def _all_fragments(self) -> list[Document]:
        found, offset = [], 0
        while batch := self.store.list_documents("fragment", limit=1000, offset=offset):
            found += batch
            offset += len(batch)
        return found

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.settings.fragments_path).with_suffix("").as_posix()

    @vault_write
    def remember_derived(self, draft: Draft) -> DerivedFragment:
        """A fragment the pipeline learned, written as ``remember`` writes one, with the
        file's hash before a merge into it and after the write."""
        seen: dict[str, str | None] = {}

        def before_merge(path: Path) -> None:
            seen["before"] = file_sha256(path)

        def after_write(path: Path) -> None:
            seen["after"] = file_sha256(path)

        done = self._remember(draft, before_merge=before_merge, after_write=after_write)
        return DerivedFragment(
            done.action,
            done.path.relative_to(self.settings.vault_path).as_posix(),
            done.similarity,
            seen.get("before"),
            seen.get("after"),
        )

    def check_fragments(self) -> CheckReport:
        """Every fragment file that breaks the fragment rules, and how."""
        folder = self.settings.fragments_path
        if not folder.is_dir():
            return CheckReport()
        return check_folder(folder, root=self.settings.vault_path)


def _comparable_text(summary: str, body: str) -> str:
    return "\n".join([summary, *facts_from(body)])


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
