"""The search index in SQLite: documents, their FTS5 rows, vectors, access and cursors.

Documents are keyed by ``(kind, key)``. Writing one whose content hash is unchanged only
refreshes its bookkeeping (mtime, archived flag); a changed one gets a new revision, new
FTS5 terms, and loses its vector until the embedding worker catches up.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence

from memvault import jsontext
from memvault.domain import DOCUMENT_KINDS, DocumentDraft
from memvault.store.contract import LEXICAL_PARTS, SESSION_PART, SearchIndex, part_of
from memvault.store.sqlite import fts5
from memvault.store.sqlite.fts5 import TABLES, scope, table_of
from memvault.store.sqlite.writer import Writer

_INSERT = """
INSERT INTO documents (kind, key, project, session_id, title, summary, body, importance,
                       updated_at, path, event_ids, archived, meta, content_hash, mtime,
                       revision, embed_text)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_UPDATE = """
UPDATE documents SET project = ?, session_id = ?, title = ?, summary = ?, body = ?,
    importance = ?, updated_at = ?, path = ?, event_ids = ?, archived = ?, meta = ?,
    content_hash = ?, mtime = ?, revision = ?, embed_text = ?
WHERE id = ?
"""


def write_documents(
    conn: sqlite3.Connection,
    upserts: Sequence[DocumentDraft],
    deletes: Iterable[tuple[str, str]],
    cursor: tuple[str, int] | None,
) -> None:
    """Apply one batch of index changes (and move a follower's cursor) atomically."""
    for kind, key in deletes:
        row = conn.execute(
            "SELECT id FROM documents WHERE kind = ? AND key = ?", (kind, key)
        ).fetchone()
        if row:
            _forget(conn, row[0])
    for draft in upserts:
        row = conn.execute(
            "SELECT id, content_hash, revision, embed_text FROM documents "
            "WHERE kind = ? AND key = ?",
            (draft.kind, draft.key),
        ).fetchone()
        if row and row[1] == draft.content_hash:
            conn.execute(
                "UPDATE documents SET mtime = ?, archived = ?, path = ? WHERE id = ?",
                (draft.mtime, int(draft.archived), draft.path, row[0]),
            )
            conn.execute(
                f"UPDATE {table_of(draft.kind)} SET scope = ? WHERE rowid = ?",
                (scope(draft), row[0]),
            )
            continue
        # Only a change of what is embedded needs a new vector (context alone does not).
        revision = row[2] if row and row[3] == draft.embed_text else _next_revision(conn)
        values = (
            draft.project,
            draft.session_id,
            draft.title,
            draft.summary,
            draft.body,
            float(draft.importance),
            draft.updated_at,
            draft.path,
            jsontext.dumps(list(draft.event_ids)),
            int(draft.archived),
            jsontext.dumps(draft.meta),
            draft.content_hash,
            draft.mtime,
            revision,
            draft.embed_text,
        )
        if row:
            doc_id = row[0]
            conn.execute(_UPDATE, (*values, doc_id))
            conn.execute(f"DELETE FROM {table_of(draft.kind)} WHERE rowid = ?", (doc_id,))
            if revision != row[2]:
                conn.execute("DELETE FROM document_vectors WHERE document_id = ?", (doc_id,))
        else:
            doc_id = conn.execute(_INSERT, (draft.kind, draft.key, *values)).lastrowid
        conn.execute(
            f"INSERT INTO {table_of(draft.kind)} (rowid, title, body, context, dates, scope) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (doc_id, *draft.terms, scope(draft)),
        )
    if cursor is not None:
        set_cursor(conn, *cursor)


def _forget(conn: sqlite3.Connection, doc_id: int) -> None:
    # Its reads go with it: a later document of the same name starts afresh.
    conn.execute(
        "DELETE FROM document_access WHERE (kind, key) = "
        "(SELECT kind, key FROM documents WHERE id = ?)",
        (doc_id,),
    )
    for table in TABLES.values():
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (doc_id,))
    conn.execute("DELETE FROM document_vectors WHERE document_id = ?", (doc_id,))
    conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))


def _next_revision(conn: sqlite3.Connection) -> int:
    return conn.execute(
        "UPDATE sequences SET value = value + 1 WHERE name = 'documents' RETURNING value"
    ).fetchone()[0]


def set_cursor(conn: sqlite3.Connection, name: str, value: int) -> None:
    conn.execute(
        "INSERT INTO cursors (name, value) VALUES (?, ?) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (name, value),
    )


def get_cursor(conn: sqlite3.Connection, name: str) -> int:
    row = conn.execute("SELECT value FROM cursors WHERE name = ?", (name,)).fetchone()
    return row[0] if row else 0


def write_vectors(
    conn: sqlite3.Connection,
    model: str,
    vectors: Sequence[tuple[int, int, bytes]],
    cursor: tuple[str, int],
) -> None:
    """Store vectors for documents still at the revision they were computed from."""
    for doc_id, revision, blob in vectors:
        current = conn.execute(
            "SELECT 1 FROM documents WHERE id = ? AND revision = ?", (doc_id, revision)
        ).fetchone()
        if current:
            conn.execute(
                "INSERT INTO document_vectors (document_id, model, vector) VALUES (?, ?, ?) "
                "ON CONFLICT (document_id) DO UPDATE SET model = excluded.model, "
                "vector = excluded.vector",
                (doc_id, model, blob),
            )
    set_cursor(conn, *cursor)


def record_access(conn: sqlite3.Connection, keys: Sequence[tuple[str, str]], at: str) -> None:
    conn.executemany(
        "INSERT INTO document_access (kind, key, count, last_accessed) VALUES (?, ?, 1, ?) "
        "ON CONFLICT (kind, key) DO UPDATE SET count = count + 1, "
        "last_accessed = excluded.last_accessed",
        [(kind, key, at) for kind, key in keys],
    )


def move_access(conn: sqlite3.Connection, kind: str, moves: Sequence[tuple[str, str]]) -> None:
    for old, new in moves:
        conn.execute(
            "UPDATE OR REPLACE document_access SET key = ? WHERE kind = ? AND key = ?",
            (new, kind, old),
        )


class SQLiteIndex(SearchIndex):
    """The search index part of the SQLite store."""

    _write_documents = staticmethod(write_documents)
    _write_vectors = staticmethod(write_vectors)
    _lexical = staticmethod(fts5.lexical_search)
    _lexical_per_kind = staticmethod(fts5.lexical_search_per_kind)

    _writer: Writer
    _reader: Callable[[], sqlite3.Connection]

    def cursor(self, name: str) -> int:
        return get_cursor(self._reader(), name)

    def move_access(self, kind: str, moves: Sequence[tuple[str, str]]) -> None:
        moves = list(moves)
        self._writer.call(lambda conn: move_access(conn, kind, moves))

    def term_counts(
        self, terms: Sequence[str], *, cap: int, parts: Sequence[str] = LEXICAL_PARTS
    ) -> dict[str, int]:
        return fts5.term_counts(self._reader(), terms, cap, parts)

    def document_count(self, parts: Sequence[str] = LEXICAL_PARTS) -> int:
        conn = self._reader()

        def count(where: str = "", params: Sequence[str] = ()) -> int:
            return conn.execute(f"SELECT count(*) FROM documents {where}", params).fetchone()[0]

        def sessions() -> int:
            # The session part is the small one: counted by its kinds (an index seek); the
            # rest is what is left of the total.
            kinds = [kind for kind in DOCUMENT_KINDS if part_of(kind) == SESSION_PART]
            return count(f"WHERE kind IN ({', '.join('?' * len(kinds))})", kinds)

        wanted = set(parts)
        if wanted >= set(LEXICAL_PARTS):
            return count()
        if wanted == {SESSION_PART}:
            return sessions()
        return count() - sessions() if wanted else 0

    def record_access(self, keys: Sequence[tuple[str, str]], at: str) -> None:
        keys = list(keys)
        # Queued, not waited for: a read must not wait for a commit. A failure shows in
        # the writer's state like any other write's.
        self._writer.submit(lambda conn: record_access(conn, keys, at))
