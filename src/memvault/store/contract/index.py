"""The search index part: documents, their lexical index and vectors, followers' cursors
and read counts; asked with a ``LexicalQuery`` of plain values that only an engine turns
into its own syntax. Its reads are written here once for both engines, in the same SQL."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from memvault import jsontext
from memvault.domain import Document, DocumentDraft
from memvault.store.engine import Engine, like_literal


class KindStamp(NamedTuple):
    """``SearchIndex.kind_stamp``: what a project's documents of one kind are now."""

    count: int
    revision: int
    mtimes: float
    archived: int


# The fields of a document the lexical index matches, in the order of its column weights.
FIELDS = ("title", "body", "context", "dates")
# A document's own text: where a phrase or a prefix must be found.
OWN_TEXT = ("title", "body")
# The lexical index is two indexes, each with its own BM25 statistics: a session's document
# holds a whole session (thousands of words) and is weighed among sessions, as a plain BM25
# over whole sessions weighs it; every other document (an event, a fragment, a summary) is
# weighed among the rest. In one index, every session was scored as if twenty times longer
# than the average document, and long sessions sank (docs/benchmarks.md).
SESSION_PART = "sessions"
REST_PART = "documents"
LEXICAL_PARTS = (REST_PART, SESSION_PART)


def part_of(kind: str) -> str:
    """The lexical index a document of ``kind`` is in."""
    return SESSION_PART if kind == "session" else REST_PART


@dataclass(frozen=True, slots=True)
class LexicalQuery:
    """What the lexical index is asked, in analyzed terms (see ``analyzer.py``).

    A result holds every phrase (its words together, in order) and, for each prefix, a word
    starting with one of its starts, both in ``required_fields``; and, when ``anchor`` is
    given, one of the anchor terms (all of them with ``all_of``). Each of ``terms`` found in
    ``fields`` counts towards the score but none is required unless nothing else is: a
    query of terms alone matches documents holding any of them. Each term counts once.
    ``alternatives`` are phrases counted as terms are (optional; each, its words together
    in order, scores as one term): another language's words for the request's, which the
    searcher asks apart from the request's own so that it can weigh them less.
    """

    terms: tuple[str, ...] = ()
    phrases: tuple[tuple[str, ...], ...] = ()
    prefixes: tuple[tuple[str, ...], ...] = ()  # each: the ways its start may be indexed
    anchor: tuple[str, ...] = ()
    all_of: bool = False
    alternatives: tuple[tuple[str, ...], ...] = ()
    fields: tuple[str, ...] = FIELDS
    required_fields: tuple[str, ...] = OWN_TEXT

    @property
    def empty(self) -> bool:
        return not (self.terms or self.phrases or self.prefixes or self.anchor or self.alternatives)


DOCUMENT_COLUMNS = """
d.id, d.kind, d.key, d.project, d.session_id, d.title, d.summary, d.body, d.importance,
d.updated_at, d.path, d.event_ids, d.archived, d.meta, coalesce(a.count, 0), a.last_accessed
"""
DOCUMENTS = "FROM documents d LEFT JOIN document_access a ON a.kind = d.kind AND a.key = d.key"


# The fields of a ``Document`` in the order of ``DOCUMENT_COLUMNS``.
_DOCUMENT_FIELDS = (
    "id",
    "kind",
    "key",
    "project",
    "session_id",
    "title",
    "summary",
    "body",
    "importance",
    "updated_at",
    "path",
    "event_ids",
    "archived",
    "meta",
    "access_count",
    "last_accessed",
)


def to_document(row: tuple) -> Document:
    values = dict(zip(_DOCUMENT_FIELDS, row, strict=True))
    values["event_ids"] = json.loads(values["event_ids"])
    values["meta"] = json.loads(values["meta"])
    values["archived"] = bool(values["archived"])
    return Document(**values)


def _marks(count: int) -> str:
    return ", ".join("?" * count)


class SearchIndex(Engine, ABC):
    """Documents (fragments, summaries, observations), their lexical index and vectors,
    followers' cursors and read counts.

    Written once on the engine's connections: ``archived`` is compared with FALSE, which
    SQLite reads as 0 and PostgreSQL as its boolean. The engine hands in its lexical search
    (``_lexical``, and ``_lexical_per_kind`` for the best of each kind: FTS5's on SQLite,
    ``postgres.bm25`` on PostgreSQL) and how it writes documents (``_write_documents``:
    conn, upserts, deletes, cursor) and vectors (``_write_vectors``: conn, model, vectors,
    cursor), each in one transaction, and its cursors, term counts and read counts."""

    _lexical: Callable[..., list[tuple[int, float]]]
    _lexical_per_kind: Callable[..., dict[str, list[tuple[int, float]]]]
    _write_documents: Callable[..., None]
    _write_vectors: Callable[..., None]

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
        upserts, deletes = list(upserts), list(deletes)
        self._writing(lambda conn: self._write_documents(conn, upserts, deletes, cursor))

    @abstractmethod
    def cursor(self, name: str) -> int:
        """Where a follower (e.g. the observation indexer) has got to; 0 at first."""

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
        many documents indexed (of the project, when one is asked). Each part of the index
        (``LEXICAL_PARTS``) gives its best ``limit``, scored by its own statistics: a
        session's score is not on the scale of an event's, and a caller ranking both weighs
        each part by its own best."""
        found: list[tuple[int, float]] = []
        for part in LEXICAL_PARTS:
            mine = [kind for kind in kinds if part_of(kind) == part]
            if not mine:
                continue
            asked = {"kinds": mine, "project": project, "limit": limit, "newest": newest}
            asked |= {"include_archived": include_archived, "weights": weights, "part": part}
            found += self._reading(lambda conn, asked=asked: self._lexical(conn, query, **asked))
        return sorted(found, key=lambda hit: hit[1], reverse=True)

    def lexical_search_per_kind(
        self,
        query: LexicalQuery,
        *,
        limits: Mapping[str, int],
        project: str | None = None,
        include_archived: bool = False,
        weights: tuple[float, float, float, float] = (1.0, 1.0, 0.5, 0.5),
        newest: int | None = None,
    ) -> dict[str, list[tuple[int, float]]]:
        """The best ``limits[kind]`` of each kind, each kind's list best first: for each
        kind, the hits ``lexical_search`` finds with ``kinds=[kind]`` and that limit (the
        same documents, the same scores), so a kind of few documents is not crowded out by
        one of many. Every kind asked has a list, empty when nothing of it matched. Each
        part of the index is asked on one connection: SQLite with one FTS5 query per kind,
        PostgreSQL with one statement for all the part's kinds."""
        found: dict[str, list[tuple[int, float]]] = {}
        for part in LEXICAL_PARTS:
            mine = {kind: n for kind, n in limits.items() if part_of(kind) == part and n > 0}
            if not mine or query.empty:
                continue
            asked = {"limits": mine, "project": project, "newest": newest, "part": part}
            asked |= {"include_archived": include_archived, "weights": weights}
            found |= self._reading(
                lambda conn, asked=asked: self._lexical_per_kind(conn, query, **asked)
            )
        return {kind: found.get(kind, []) for kind in limits}

    @abstractmethod
    def term_counts(
        self, terms: Sequence[str], *, cap: int, parts: Sequence[str] = LEXICAL_PARTS
    ) -> dict[str, int]:
        """How many documents of these ``parts`` of the index hold each analyzed term,
        counted no further than ``cap + 1``."""

    @abstractmethod
    def document_count(self, parts: Sequence[str] = LEXICAL_PARTS) -> int:
        """How many documents these ``parts`` of the index hold."""

    def documents(self, ids: Sequence[int]) -> dict[int, Document]:
        rows = self._select_in(
            f"SELECT {DOCUMENT_COLUMNS} {DOCUMENTS} WHERE d.id IN ({{marks}})", ids
        )
        return {row[0]: to_document(row) for row in rows}

    def embeddable(self, ids: Sequence[int]) -> set[int]:
        """The documents of ``ids`` that have a text to embed: each has a vector once the
        embedder reaches it (a tool call has none: ``search.documents.embedded``)."""
        rows = self._select_in(
            "SELECT id FROM documents WHERE id IN ({marks}) AND embed_text <> ''", ids
        )
        return {row[0] for row in rows}

    def document(self, kind: str, key: str) -> Document | None:
        row = self._select_one(
            f"SELECT {DOCUMENT_COLUMNS} {DOCUMENTS} WHERE d.kind = ? AND d.key = ?", (kind, key)
        )
        return to_document(row) if row else None

    def list_documents(
        self,
        kind: str,
        *,
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 50,
        offset: int = 0,
        meta_holds: str | None = None,
    ) -> list[Document]:
        """Most recently updated first. ``meta_holds``: only those whose meta holds this
        string whole (ASCII case aside), as a value or a key anywhere in it: a filter for a
        tag, say, whose caller reads the meta again to know where it stands."""
        where, params = ["d.kind = ?"], [kind]
        if project is not None:
            where.append("d.project = ?")
            params.append(project)
        if meta_holds is not None:
            where.append("lower(d.meta) LIKE ? ESCAPE '\\'")
            params.append(f"%{like_literal(jsontext.dumps(meta_holds).lower())}%")
        if not include_archived:
            where.append("d.archived = FALSE")
        rows = self._select(
            f"SELECT {DOCUMENT_COLUMNS} {DOCUMENTS} WHERE {' AND '.join(where)} "
            "ORDER BY d.updated_at DESC, d.id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [to_document(row) for row in rows]

    def kind_stamp(self, kind: str, project: str | None) -> KindStamp:
        """What the project's documents of ``kind`` are now, in four numbers: how many
        (archived too), the newest revision, the sum of their file times and how many are
        archived. It moves whenever one of them is written or deleted, so a copy of them
        read with it is current while it stays the same. The revision alone would not do:
        it moves only with the text embedded, and a fragment file rewritten with new
        properties and the same text (a merge that confirms a decision), or archived, keeps
        it; a file written again gets a new time."""
        where, params = "d.kind = ?", [kind]
        if project is not None:
            where, params = f"d.project = ? AND {where}", [project, kind]
        row = self._select_one(
            "SELECT count(*), coalesce(max(d.revision), 0), coalesce(sum(d.mtime), 0),"
            " coalesce(sum(CASE WHEN d.archived THEN 1 ELSE 0 END), 0)"
            f" FROM documents d WHERE {where}",
            tuple(params),
        )
        return KindStamp(*row) if row else KindStamp(0, 0, 0.0, 0)

    def session_documents(
        self, session_id: str, *, kinds: Sequence[str], limit: int
    ) -> list[Document]:
        """A host session's documents of these kinds, the newest ``limit`` first."""
        marks = ", ".join("?" for _ in kinds)
        rows = self._select(
            f"SELECT {DOCUMENT_COLUMNS} {DOCUMENTS} WHERE d.session_id = ? "
            f"AND d.kind IN ({marks}) ORDER BY d.id DESC LIMIT ?",
            (session_id, *kinds, limit),
        )
        return [to_document(row) for row in rows]

    def document_stamps(self, kind: str) -> dict[str, tuple[str, float | None]]:
        """key → (content hash, mtime) of every document of a kind: what a scan compares."""
        rows = self._select(
            "SELECT key, content_hash, mtime FROM documents WHERE kind = ?", (kind,)
        )
        return {row[0]: (row[1], row[2]) for row in rows}

    def documents_to_embed(self, after_revision: int, *, limit: int) -> list[tuple[int, int, str]]:
        """(id, revision, text) of documents changed after a revision that have a text to
        embed (a tool call has none: see ``search.documents.embedded``), oldest change
        first."""
        rows = self._select(
            "SELECT id, revision, embed_text FROM documents WHERE revision > ? "
            "AND embed_text <> '' ORDER BY revision LIMIT ?",
            (after_revision, limit),
        )
        return [(row[0], row[1], row[2]) for row in rows]

    def write_vectors(
        self, model: str, vectors: Sequence[tuple[int, int, bytes]], *, cursor: tuple[str, int]
    ) -> None:
        """Store (id, revision, vector) for documents still at that revision; move the
        embedding cursor."""
        vectors = list(vectors)
        self._writing(lambda conn: self._write_vectors(conn, model, vectors, cursor))

    def vectors(self, model: str) -> list[tuple[int, str, bytes]]:
        """(document id, kind, vector) of every stored vector of a model."""
        rows = self._select(
            "SELECT v.document_id, d.kind, v.vector FROM document_vectors v "
            "JOIN documents d ON d.id = v.document_id WHERE v.model = ?",
            (model,),
        )
        return [(row[0], row[1], bytes(row[2])) for row in rows]

    def vector_changes(
        self, model: str, after_revision: int, through_revision: int, *, limit: int
    ) -> list[tuple[int, str, int, bytes | None]]:
        """(id, kind, revision, vector of ``model`` or None) of the documents changed after
        ``after_revision`` up to ``through_revision``, oldest change first: what an
        in-memory index follows other processes' vectors by (None: the document has no
        vector of this model now, so a vector held for it is stale)."""
        rows = self._select(
            "SELECT d.id, d.kind, d.revision, v.vector FROM documents d "
            "LEFT JOIN document_vectors v ON v.document_id = d.id AND v.model = ? "
            "WHERE d.revision > ? AND d.revision <= ? ORDER BY d.revision LIMIT ?",
            (model, after_revision, through_revision, limit),
        )
        return [(row[0], row[1], row[2], None if row[3] is None else bytes(row[3])) for row in rows]

    def document_kinds(self, ids: Sequence[int]) -> dict[int, str]:
        """The kind of each of these documents that still exists."""
        rows = self._select_in("SELECT id, kind FROM documents WHERE id IN ({marks})", ids)
        return {row[0]: row[1] for row in rows}

    def document_ids(
        self, *, kinds: Sequence[str], project: str, include_archived: bool = False
    ) -> list[int]:
        """Ids of a project's documents of these kinds."""
        sql = f"SELECT id FROM documents WHERE project = ? AND kind IN ({_marks(len(kinds))})"
        if not include_archived:
            sql += " AND archived = FALSE"
        return [row[0] for row in self._select(sql + " ORDER BY id", (project, *kinds))]

    @abstractmethod
    def record_access(self, keys: Sequence[tuple[str, str]], at: str) -> None:
        """Count one read of each ``(kind, key)`` at ``at`` (queued: it does not wait for the
        commit)."""

    @abstractmethod
    def move_access(self, kind: str, moves: Sequence[tuple[str, str]]) -> None:
        """Carry read counts over from old keys to new ones (a fragment moved)."""

    def documents_since(self, revision: int) -> int:
        # A range of the revision index: as long as the backlog, not the table.
        """How many documents with a text to embed changed after ``revision``: the
        embedding backlog."""
        row = self._select_one(
            "SELECT count(*) FROM documents WHERE revision > ? AND embed_text <> ''", (revision,)
        )
        return row[0] if row else 0

    def fragment_counts(self) -> tuple[int, int]:
        """Indexed fragments: (live, archived)."""
        rows = self._select(
            "SELECT archived, count(*) FROM documents WHERE kind = 'fragment' GROUP BY archived"
        )
        counts = {bool(archived): count for archived, count in rows}
        return counts.get(False, 0), counts.get(True, 0)
