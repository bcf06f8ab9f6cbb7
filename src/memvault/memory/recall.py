"""Recall: search (L0), one memory whole (L1), a project's memory (L2), and what an id names.

Public ids: an observation is ``obs_<seq>``, a session summary its board Session ID, a
host session ``session:<its id>``, a fragment its path inside the fragments folder
without ``.md`` (``_archive/…`` once archived).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from memvault.config import Settings
from memvault.domain import DOCUMENT_KINDS, Document, iso, utc_now
from memvault.errors import InvalidInput
from memvault.memory.index import Index
from memvault.search.documents import is_bookkeeping
from memvault.search.engine import Hit
from memvault.search.ranking import Weights
from memvault.store import Store
from memvault.vault import maintain
from memvault.vault.files import OutsideFolder, inside
from memvault.vault.fragments import Fragment

_OBSERVATION_ID = re.compile(r"^obs_\d+$")
SESSION_PREFIX = "session:"


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


class Recall:
    """Reading memory back: what matches a query, one memory, a project's memory."""

    def __init__(self, settings: Settings, store: Store, index: Index) -> None:
        self.settings = settings
        self.store = store
        self.index = index

    @property
    def weights(self) -> Weights:
        return self.index.weights

    @property
    def has_semantic(self) -> bool:
        """Whether an embedding model is configured."""
        return self.index.semantic is not None

    def warm_semantic(self) -> None:
        """Load the embedding model and embed what is not embedded yet; raises what the
        model or its endpoint raised when it cannot."""
        assert self.index.semantic is not None
        self.index.semantic.warm()
        self.index.index_now()

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
        """Memory matching ``query``, best first (L0: titles and summaries); never the
        sessions' bookkeeping (``documents.is_bookkeeping``: an idle row nobody described, a
        session starting, what memvault gave an agent)."""
        kinds = _kinds(kinds)
        if not 1 <= limit <= 100:
            raise InvalidInput("limit must be from 1 to 100", fields=["limit"])
        self.index.fresh()
        return self.index.searcher.search(
            query,
            limit=limit,
            project=project,
            kinds=kinds,
            include_archived=include_archived,
            weights=weights,
            admit=_not_bookkeeping,
        )

    def public_id(self, document: Document) -> str:
        if document.kind == "session":
            return f"{SESSION_PREFIX}{document.key}"
        if document.kind != "fragment":
            return document.key
        relative = PurePosixPath(document.key).relative_to(
            PurePosixPath(self.settings.fragments_dir)
        )
        return str(relative.with_suffix(""))

    def document(self, memory_id: str) -> Document | None:
        """The document an id names. A fragment id names a file in the fragments folder and
        a Session ID a snapshot in ``memory/sessions/``: an id that would lead out of its
        folder names no memory, and nothing is looked up for it."""
        if _OBSERVATION_ID.match(memory_id):
            return self.store.document("observation", memory_id)
        if memory_id.startswith(SESSION_PREFIX):
            return self.store.document("session", memory_id.removeprefix(SESSION_PREFIX))
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

    def fragment_document(self, path: Path) -> Document | None:
        """The indexed document of a fragment file in the vault, if it is indexed."""
        return self.store.document(
            "fragment", path.relative_to(self.settings.vault_path).as_posix()
        )

    def fragment_file(self, document: Document) -> Path:
        """The file of an indexed fragment, checked to be inside the fragments folder."""
        relative = PurePosixPath(document.key).relative_to(
            PurePosixPath(self.settings.fragments_dir)
        )
        try:
            return inside(self.settings.fragments_path, relative)
        except OutsideFolder as exc:
            raise InvalidInput(f"fragment {document.key!r}: {exc}", fields=["memoryId"]) from None

    def get(self, memory_id: str, *, counted: bool = True) -> Entry | None:
        """One memory whole (L1). A fragment is read from its file, so a hand edit shows.
        A fragment read counts as a use of it (what keeps it from being archived) unless
        ``counted`` is off: a person looking at it in the viewer is not an agent using it."""
        self.index.fresh()
        document = self.document(memory_id)
        if document is None:
            return None
        if document.kind != "fragment":
            return Entry(self.public_id(document), document, document.body)
        path = self.fragment_file(document)
        try:
            fragment = Fragment.read(path)
        except (OSError, ValueError):
            return None  # the file went away since it was indexed
        if counted:
            self.accessed([document])
        return Entry(self.public_id(document), document, fragment.body.strip(), fragment.properties)

    def accessed(self, documents: list[Document]) -> None:
        """Count a use of each document (what keeps a fragment from being archived)."""
        if documents:
            self.store.record_access([(d.kind, d.key) for d in documents], iso(utc_now()))

    def project_memory(self, project: str, *, limit: int = 50) -> ProjectMemory:
        """The project's L2 summary when it has one, and its fragments, newest first."""
        self.index.fresh()
        fragments = self.store.list_documents("fragment", project=project, limit=limit)
        total = len(self.store.document_ids(kinds=["fragment"], project=project))
        summary = maintain.read_summary(self.settings.fragments_path, project)
        return ProjectMemory(project, summary, fragments, total)


def _kinds(kinds: list[str] | tuple[str, ...] | None) -> list[str]:
    if kinds is None:
        return list(DOCUMENT_KINDS)
    unknown = [kind for kind in kinds if kind not in DOCUMENT_KINDS]
    if unknown or not kinds:
        raise InvalidInput(
            f"kinds must be some of {', '.join(DOCUMENT_KINDS)}; got {kinds!r}", fields=["kinds"]
        )
    return list(kinds)


def _not_bookkeeping(document: Document) -> bool:
    return not is_bookkeeping(document)
