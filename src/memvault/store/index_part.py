"""The search index part both engines share: documents by id, by key and by kind, what a
scan compares, the embedding worker's and followers' reads, all in the same SQL; and the
engine's own writes and lexical search, handed in as functions."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from memvault.domain import Document, DocumentDraft
from memvault.store.contract import LexicalQuery
from memvault.store.engine import Engine

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


class SharedIndex(Engine):
    """The index part of each store. ``archived`` is compared with FALSE, which SQLite
    reads as 0 and PostgreSQL as its boolean. The engine hands in its lexical search
    (``_lexical``: FTS5's on SQLite, ``postgres.bm25`` on PostgreSQL) and how it writes
    documents (``_write_documents``: conn, upserts, deletes, cursor) and vectors
    (``_write_vectors``: conn, model, vectors, cursor), each in one transaction."""

    _lexical: Callable[..., list[tuple[int, float]]]
    _write_documents: Callable[..., None]
    _write_vectors: Callable[..., None]

    def write_documents(
        self,
        upserts: Sequence[DocumentDraft] = (),
        deletes: Sequence[tuple[str, str]] = (),
        *,
        cursor: tuple[str, int] | None = None,
    ) -> None:
        upserts, deletes = list(upserts), list(deletes)
        self._writing(lambda conn: self._write_documents(conn, upserts, deletes, cursor))

    def write_vectors(
        self, model: str, vectors: Sequence[tuple[int, int, bytes]], *, cursor: tuple[str, int]
    ) -> None:
        vectors = list(vectors)
        self._writing(lambda conn: self._write_vectors(conn, model, vectors, cursor))

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
        asked = {"kinds": list(kinds), "project": project, "limit": limit, "newest": newest}
        asked |= {"include_archived": include_archived, "weights": weights}
        return self._reading(lambda conn: self._lexical(conn, query, **asked))

    def documents(self, ids: Sequence[int]) -> dict[int, Document]:
        rows = self._select_in(
            f"SELECT {DOCUMENT_COLUMNS} {DOCUMENTS} WHERE d.id IN ({{marks}})", ids
        )
        return {row[0]: to_document(row) for row in rows}

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
    ) -> list[Document]:
        where, params = ["d.kind = ?"], [kind]
        if project is not None:
            where.append("d.project = ?")
            params.append(project)
        if not include_archived:
            where.append("d.archived = FALSE")
        rows = self._select(
            f"SELECT {DOCUMENT_COLUMNS} {DOCUMENTS} WHERE {' AND '.join(where)} "
            "ORDER BY d.updated_at DESC, d.id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [to_document(row) for row in rows]

    def document_stamps(self, kind: str) -> dict[str, tuple[str, float | None]]:
        rows = self._select(
            "SELECT key, content_hash, mtime FROM documents WHERE kind = ?", (kind,)
        )
        return {row[0]: (row[1], row[2]) for row in rows}

    def documents_to_embed(self, after_revision: int, *, limit: int) -> list[tuple[int, int, str]]:
        rows = self._select(
            "SELECT id, revision, embed_text FROM documents WHERE revision > ? "
            "ORDER BY revision LIMIT ?",
            (after_revision, limit),
        )
        return [(row[0], row[1], row[2]) for row in rows]

    def vectors(self, model: str) -> list[tuple[int, str, bytes]]:
        rows = self._select(
            "SELECT v.document_id, d.kind, v.vector FROM document_vectors v "
            "JOIN documents d ON d.id = v.document_id WHERE v.model = ?",
            (model,),
        )
        return [(row[0], row[1], bytes(row[2])) for row in rows]

    def vector_changes(
        self, model: str, after_revision: int, through_revision: int, *, limit: int
    ) -> list[tuple[int, str, int, bytes | None]]:
        rows = self._select(
            "SELECT d.id, d.kind, d.revision, v.vector FROM documents d "
            "LEFT JOIN document_vectors v ON v.document_id = d.id AND v.model = ? "
            "WHERE d.revision > ? AND d.revision <= ? ORDER BY d.revision LIMIT ?",
            (model, after_revision, through_revision, limit),
        )
        return [(row[0], row[1], row[2], None if row[3] is None else bytes(row[3])) for row in rows]

    def document_kinds(self, ids: Sequence[int]) -> dict[int, str]:
        rows = self._select_in("SELECT id, kind FROM documents WHERE id IN ({marks})", ids)
        return {row[0]: row[1] for row in rows}

    def document_ids(
        self, *, kinds: Sequence[str], project: str, include_archived: bool = False
    ) -> list[int]:
        sql = f"SELECT id FROM documents WHERE project = ? AND kind IN ({_marks(len(kinds))})"
        if not include_archived:
            sql += " AND archived = FALSE"
        return [row[0] for row in self._select(sql + " ORDER BY id", (project, *kinds))]

    def documents_since(self, revision: int) -> int:
        # A range of the revision index: as long as the backlog, not the table.
        row = self._select_one("SELECT count(*) FROM documents WHERE revision > ?", (revision,))
        return row[0] if row else 0

    def fragment_counts(self) -> tuple[int, int]:
        rows = self._select(
            "SELECT archived, count(*) FROM documents WHERE kind = 'fragment' GROUP BY archived"
        )
        counts = {bool(archived): count for archived, count in rows}
        return counts.get(False, 0), counts.get(True, 0)
