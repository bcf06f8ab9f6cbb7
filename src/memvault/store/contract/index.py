"""The search index part: documents, their lexical index and vectors, followers' cursors
and read counts; asked with a ``LexicalQuery`` of plain values that only an engine turns
into its own syntax."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from memvault.domain import Document, DocumentDraft

# The fields of a document the lexical index matches, in the order of its column weights.
FIELDS = ("title", "body", "context", "dates")
# A document's own text: where a phrase or a prefix must be found.
OWN_TEXT = ("title", "body")


@dataclass(frozen=True, slots=True)
class LexicalQuery:
    """What the lexical index is asked, in analyzed terms (see ``analyzer.py``).

    A result holds every phrase (its words together, in order) and, for each prefix, a word
    starting with one of its starts, both in ``required_fields``; and, when ``anchor`` is
    given, one of the anchor terms (all of them with ``all_of``). Each of ``terms`` found in
    ``fields`` counts towards the score but none is required unless nothing else is: a
    query of terms alone matches documents holding any of them. Each term counts once.
    """

    terms: tuple[str, ...] = ()
    phrases: tuple[tuple[str, ...], ...] = ()
    prefixes: tuple[tuple[str, ...], ...] = ()  # each: the ways its start may be indexed
    anchor: tuple[str, ...] = ()
    all_of: bool = False
    fields: tuple[str, ...] = FIELDS
    required_fields: tuple[str, ...] = OWN_TEXT

    @property
    def empty(self) -> bool:
        return not (self.terms or self.phrases or self.prefixes or self.anchor)


class SearchIndex(ABC):
    """Documents (fragments, summaries, observations), their lexical index and vectors,
    followers' cursors and read counts."""

    @abstractmethod
    def write_documents(
        self,
        upserts: Sequence[DocumentDraft] = (),
        deletes: Sequence[tuple[str, str]] = (),
        *,
        cursor: tuple[str, int] | None = None,
    ) -> None:
        """Index, re-index (by ``(kind, key)``) and drop documents, and move a follower's
        cursor, in one transaction. An unchanged content hash keeps the document's revision
        and vector."""

    @abstractmethod
    def cursor(self, name: str) -> int:
        """Where a follower (e.g. the observation indexer) has got to; 0 at first."""

    @abstractmethod
    def lexical_search(
        self,
        query: LexicalQuery,
        *,
        kinds: Sequence[str],
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 100,
        weights: tuple[float, float, float, float] = (1.0, 1.0, 0.5, 0.5),
        newest: int | None = None,
    ) -> list[tuple[int, float]]:
        """(document id, BM25 score) best first, for a query over analyzed terms, among the
        documents of these kinds (of one project, live only unless ``include_archived``);
        fields weighted (title, body, context, dates); ``newest`` limits it to the last that
        many documents indexed."""

    @abstractmethod
    def term_counts(self, terms: Sequence[str], *, cap: int) -> dict[str, int]:
        """How many documents hold each analyzed term, counted no further than ``cap + 1``."""

    @abstractmethod
    def document_count(self) -> int:
        """How many documents the index holds."""

    @abstractmethod
    def documents(self, ids: Sequence[int]) -> dict[int, Document]: ...

    @abstractmethod
    def document(self, kind: str, key: str) -> Document | None: ...

    @abstractmethod
    def list_documents(
        self,
        kind: str,
        *,
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 50,
        offset: int = 0,
    ) -> list[Document]:
        """Most recently updated first."""

    @abstractmethod
    def document_stamps(self, kind: str) -> dict[str, tuple[str, float | None]]:
        """key → (content hash, mtime) of every document of a kind: what a scan compares."""

    @abstractmethod
    def documents_to_embed(self, after_revision: int, *, limit: int) -> list[tuple[int, int, str]]:
        """(id, revision, text) of documents changed after a revision, oldest change first."""

    @abstractmethod
    def write_vectors(
        self, model: str, vectors: Sequence[tuple[int, int, bytes]], *, cursor: tuple[str, int]
    ) -> None:
        """Store (id, revision, vector) for documents still at that revision; move the
        embedding cursor."""

    @abstractmethod
    def vectors(self, model: str) -> list[tuple[int, str, bytes]]:
        """(document id, kind, vector) of every stored vector of a model."""

    @abstractmethod
    def vector_changes(
        self, model: str, after_revision: int, through_revision: int, *, limit: int
    ) -> list[tuple[int, str, int, bytes | None]]:
        """(id, kind, revision, vector of ``model`` or None) of the documents changed after
        ``after_revision`` up to ``through_revision``, oldest change first: what an
        in-memory index follows other processes' vectors by (None: the document has no
        vector of this model now, so a vector held for it is stale)."""

    @abstractmethod
    def document_kinds(self, ids: Sequence[int]) -> dict[int, str]:
        """The kind of each of these documents that still exists."""

    @abstractmethod
    def document_ids(
        self, *, kinds: Sequence[str], project: str, include_archived: bool = False
    ) -> list[int]:
        """Ids of a project's documents of these kinds."""

    @abstractmethod
    def record_access(self, keys: Sequence[tuple[str, str]], at: str) -> None:
        """Count one read of each ``(kind, key)`` at ``at`` (queued: it does not wait for the
        commit)."""

    @abstractmethod
    def move_access(self, kind: str, moves: Sequence[tuple[str, str]]) -> None:
        """Carry read counts over from old keys to new ones (a fragment moved)."""

    @abstractmethod
    def documents_since(self, revision: int) -> int:
        """How many documents changed after ``revision``: the embedding backlog."""

    @abstractmethod
    def fragment_counts(self) -> tuple[int, int]:
        """Indexed fragments: (live, archived)."""
