"""The search index in PostgreSQL: documents, their postings, vectors, access and cursors
(the lexical search itself, BM25 as FTS5 scores it, is ``bm25``).

Documents are keyed by ``(kind, key)``. A write whose content hash is unchanged refreshes
only its bookkeeping; a changed one gets new postings and, when what is embedded changed, a
new revision and no vector until the embedding worker catches up. Every write takes the
index's advisory lock first and draws ids and revisions under it, so they become visible in
the order they were drawn. Vectors are kept as the bytes SQLite keeps (pgvector is not
used); the in-process vector index reads them with ``vectors(model)``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from memvault import jsontext
from memvault.domain import DocumentDraft
from memvault.errors import StoreUnavailable
from memvault.store.contract import FIELDS, LEXICAL_PARTS, SearchIndex, part_of
from memvault.store.postgres.bm25 import (
    SCOPE_TOKENS,
    TERMS,
    TOTALS,
    Phrase,
    field_numbers,
    lexical_search,
    lexical_search_per_kind,
    no_jit,
    phrase_count_sql,
    postings,
    query_tokens,
    scope_length,
    terms_table,
    token_counts_sql,
    tokenize,
)

log = logging.getLogger(__name__)

# pg_advisory_xact_lock key of the index's writes (beside the event log's, 0x6D76_0001).
DOCUMENTS_LOCK = 0x6D76_0010


_INSERT = """
INSERT INTO documents (id, kind, key, project, session_id, title, summary, body, importance,
                       updated_at, path, event_ids, archived, meta, content_hash, mtime,
                       revision, embed_text, scope_project, length)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
"""
_UPDATE = """
UPDATE documents SET project = %s, session_id = %s, title = %s, summary = %s, body = %s,
    importance = %s, updated_at = %s, path = %s, event_ids = %s, archived = %s, meta = %s,
    content_hash = %s, mtime = %s, revision = %s, embed_text = %s, scope_project = %s,
    length = %s
WHERE id = %s
"""
_REFRESH = """
UPDATE documents SET mtime = %s, archived = %s, path = %s, scope_project = %s, length = %s
WHERE id = %s
"""


def write_documents(
    conn,
    upserts: Sequence[DocumentDraft],
    deletes: Sequence[tuple[str, str]],
    cursor: tuple[str, int] | None,
) -> None:
    """Apply one batch of index changes (and move a follower's cursor) in the caller's
    transaction, under the index's lock: ids, revisions and totals are drawn here. A batch
    whose cursor is not ahead of the stored one was written by another replica following
    the same log, and is dropped whole: a cursor never moves back."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (DOCUMENTS_LOCK,))
    if cursor is not None and not _ahead(conn, *cursor):
        return
    columns = ", ".join(column for part in LEXICAL_PARTS for column in TOTALS[part])
    row = conn.execute(
        f"SELECT {columns}, last_id, last_revision FROM document_totals FOR UPDATE"
    ).fetchone()
    # Each part's documents and tokens: BM25's N and lengths are each part's own.
    totals = {part: list(row[2 * i : 2 * i + 2]) for i, part in enumerate(LEXICAL_PARTS)}
    last_id, last_revision = row[-2:]
    for kind, key in dict.fromkeys(deletes):
        row = conn.execute(
            "DELETE FROM documents WHERE kind = %s AND key = %s RETURNING id, length", (kind, key)
        ).fetchone()
        if row:
            # Its reads go with it: a later document of the same name starts afresh.
            conn.execute("DELETE FROM document_access WHERE kind = %s AND key = %s", (kind, key))
            conn.execute(f"DELETE FROM {terms_table(kind)} WHERE document_id = %s", (row[0],))
            conn.execute("DELETE FROM document_vectors WHERE document_id = %s", (row[0],))
            totals[part_of(kind)][0] -= 1
            totals[part_of(kind)][1] -= row[1]
    stored = _stored(conn, upserts)
    split = tokenize([text for draft in upserts for text in draft.terms])
    fresh: dict[int, tuple[str, list[tuple]]] = {}
    # Sent without waiting for each answer; nothing below reads one back.
    with conn.pipeline():
        for n, draft in enumerate(upserts):
            row = stored.get((draft.kind, draft.key))
            project = draft.project or None
            part = totals[part_of(draft.kind)]
            if row and row[1] == draft.content_hash:
                length = row[4] - row[5] + scope_length(draft)
                conn.execute(
                    _REFRESH, (draft.mtime, draft.archived, draft.path, project, length, row[0])
                )
                part[1] += length - row[4]
                stored[(draft.kind, draft.key)] = (*row[:4], length, scope_length(draft))
                continue
            # Only a change of what is embedded needs a new vector (context alone does not).
            if row and row[3] == _text(draft.embed_text):
                revision = row[2]
            else:
                last_revision = revision = last_revision + 1
            doc_id = row[0] if row else last_id + 1
            rows, length = postings(doc_id, split[4 * n : 4 * n + 4])
            length += scope_length(draft)
            values = (
                draft.project,
                draft.session_id,
                _text(draft.title),
                _text(draft.summary),
                _text(draft.body),
                float(draft.importance),
                draft.updated_at,
                draft.path,
                jsontext.dumps(list(draft.event_ids)),
                draft.archived,
                jsontext.dumps(draft.meta),
                draft.content_hash,
                draft.mtime,
                revision,
                _text(draft.embed_text),
                project,
                length,
            )
            if row:
                conn.execute(_UPDATE, (*values, doc_id))
                conn.execute(
                    f"DELETE FROM {terms_table(draft.kind)} WHERE document_id = %s", (doc_id,)
                )
                if revision != row[2]:
                    conn.execute("DELETE FROM document_vectors WHERE document_id = %s", (doc_id,))
                part[1] += length - row[4]
            else:
                last_id = doc_id
                conn.execute(_INSERT, (doc_id, draft.kind, draft.key, *values))
                part[0] += 1
                part[1] += length
            # A document written twice in one batch: the last counts.
            fresh[doc_id] = (terms_table(draft.kind), rows)
            stored[(draft.kind, draft.key)] = (
                doc_id,
                draft.content_hash,
                revision,
                _text(draft.embed_text),
                length,
                scope_length(draft),
            )
        assigned = ", ".join(f"{c} = %s" for part in LEXICAL_PARTS for c in TOTALS[part])
        conn.execute(
            f"UPDATE document_totals SET {assigned}, last_id = %s, last_revision = %s",
            (*(n for part in LEXICAL_PARTS for n in totals[part]), last_id, last_revision),
        )
        if cursor is not None:
            set_cursor(conn, *cursor)
    for table in sorted({table for table, _ in fresh.values()}):
        with conn.cursor().copy(
            f"COPY {table} (term, document_id, field, frequency, positions) FROM STDIN"
        ) as copy:
            copy.write(
                "".join(_copy_line(r) for t, rows in fresh.values() if t == table for r in rows)
            )


def _copy_line(posting: tuple) -> str:
    """One postings row in COPY's text format."""
    term, doc_id, field, frequency, positions = posting
    term = term.translate(_COPY_ESCAPES)
    return f"{term}\t{doc_id}\t{field}\t{frequency}\t{{{','.join(map(str, positions))}}}\n"


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _text(value: str) -> str:
    """Free text as PostgreSQL can hold it: a NUL (which SQLite keeps) becomes U+FFFD. The
    analyzed terms never hold one, so what matches is the same."""
    return value.replace("\x00", "\ufffd")


def _stored(conn, upserts: Sequence[DocumentDraft]) -> dict[tuple[str, str], tuple]:
    """(kind, key) → (id, content hash, revision, embed text, length, scope tokens) of the
    documents these drafts rewrite, locked for this transaction."""
    if not upserts:
        return {}
    rows = conn.execute(
        "SELECT kind, key, id, content_hash, revision, embed_text, length, "
        f"{SCOPE_TOKENS} + (scope_project IS NOT NULL)::int FROM documents "
        "WHERE (kind, key) IN (SELECT * FROM unnest(%s::text[], %s::text[])) FOR UPDATE",
        ([d.kind for d in upserts], [d.key for d in upserts]),
    )
    return {(row[0], row[1]): row[2:] for row in rows}


def _locks(conn, rows: str, *params) -> bool:
    """Whether ``SELECT 1 FROM {rows}`` (a FOR SHARE or FOR UPDATE) finds a row, which
    stays locked for the rest of the transaction."""
    return conn.execute(f"SELECT 1 FROM {rows}", params).fetchone() is not None


def _ahead(conn, name: str, value: int) -> bool:
    row = conn.execute("SELECT value FROM cursors WHERE name = %s", (name,)).fetchone()
    return row is None or row[0] < value


def set_cursor(conn, name: str, value: int) -> None:
    conn.execute(
        "INSERT INTO cursors (name, value) VALUES (%s, %s) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (name, value),
    )


def write_vectors(
    conn, model: str, vectors: Sequence[tuple[int, int, bytes]], cursor: tuple[str, int]
) -> None:
    """Store vectors for documents still at the revision they were computed from. The
    document is locked while its vector is written, so a rewrite that commits meanwhile
    either waits for the vector (and drops it) or is seen and leaves it unwritten. Vectors
    whose cursor another replica already passed are dropped (that replica wrote them)."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (DOCUMENTS_LOCK,))
    if not _ahead(conn, *cursor):
        return
    for doc_id, revision, blob in sorted(vectors):  # in id order: replicas never deadlock
        if _locks(conn, "documents WHERE id = %s AND revision = %s FOR SHARE", doc_id, revision):
            conn.execute(
                "INSERT INTO document_vectors (document_id, model, vector) VALUES (%s, %s, %s) "
                "ON CONFLICT (document_id) DO UPDATE SET model = excluded.model, "
                "vector = excluded.vector",
                (doc_id, model, bytes(blob)),
            )
    set_cursor(conn, *cursor)


# -- reads --------------------------------------------------------------------------------


class PostgresSearchIndex(SearchIndex):
    """The search index part of the PostgreSQL store. Every statement runs through the
    store's ``_transaction``, so a database that cannot be reached fails as
    ``StoreUnavailable`` (a 503), not as a driver error."""

    _write_documents = staticmethod(write_documents)
    _write_vectors = staticmethod(write_vectors)
    _lexical = staticmethod(lexical_search)
    _lexical_per_kind = staticmethod(lexical_search_per_kind)

    _transaction: Callable

    def _rows(self, sql: str, params: Sequence | None = None) -> list[tuple]:
        return self._transaction(lambda conn: conn.execute(sql, params).fetchall())

    def _value(self, sql: str, params: Sequence | None = None):
        row = self._transaction(lambda conn: conn.execute(sql, params).fetchone())
        return row[0] if row else None

    def cursor(self, name: str) -> int:
        value = self._value("SELECT value FROM cursors WHERE name = %s", (name,))
        return value if value is not None else 0

    def term_counts(
        self, terms: Sequence[str], *, cap: int, parts: Sequence[str] = LEXICAL_PARTS
    ) -> dict[str, int]:
        fields = field_numbers(FIELDS)

        def op(conn) -> dict[str, int]:
            no_jit(conn)
            phrases = {term: Phrase(query_tokens(term), False, fields) for term in terms}
            found = {term: 0 for term in phrases}
            # Words of one token (nearly all): one statement per part for all of them, each
            # counted up to the cap; a part after the first only for those under it. The
            # sum over the parts, cut at cap + 1, is what counting part after part as far
            # as the cap gives.
            single = [term for term, phrase in phrases.items() if len(phrase.tokens) == 1]
            for table in (TERMS[part] for part in parts):
                single = [term for term in single if found[term] <= cap]
                if not single:
                    break
                tokens = [phrases[term].tokens[0] for term in single]
                rows = conn.execute(token_counts_sql(table), (list(fields), cap + 1, tokens))
                for place, count in rows.fetchall():
                    term = single[place - 1]
                    found[term] = min(found[term] + count, cap + 1)
            for term, phrase in phrases.items():
                if len(phrase.tokens) < 2:
                    continue
                count = 0
                for table in (TERMS[part] for part in parts):  # as far as the cap
                    if count > cap:
                        break
                    sql, params = phrase_count_sql(phrase, table)
                    count += conn.execute(sql, (*params, cap + 1 - count)).fetchone()[0]
                found[term] = count
            return found

        return self._transaction(op)

    def document_count(self, parts: Sequence[str] = LEXICAL_PARTS) -> int:
        counted = " + ".join(TOTALS[part][0] for part in parts) or "0"
        return self._value(f"SELECT {counted} FROM document_totals")

    def record_access(self, keys: Sequence[tuple[str, str]], at: str) -> None:
        # In key order, so two replicas counting the same documents never deadlock.
        rows = [(kind, key, at) for kind, key in sorted(keys)]
        if not rows:
            return

        def op(conn) -> None:
            conn.cursor().executemany(
                "INSERT INTO document_access (kind, key, count, last_accessed) "
                "VALUES (%s, %s, 1, %s) ON CONFLICT (kind, key) DO UPDATE SET "
                "count = document_access.count + 1, last_accessed = excluded.last_accessed",
                rows,
            )

        # Queued, not waited for: a read must not wait for a commit. One thread per store
        # writes them in order; sync() waits for it. A database that is away shows in
        # write_trouble (``_transaction`` keeps it); any other failure is logged.
        self._access_queue().submit(self._transaction, op).add_done_callback(_access_failed)

    def _access_queue(self) -> ThreadPoolExecutor:
        with _ACCESS_LOCK:
            queue = self.__dict__.get("_access_writer")
            if queue is None:
                queue = self.__dict__["_access_writer"] = ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="memvault-postgres-access"
                )
            return queue

    def _sync_access(self) -> None:
        """Wait for the read counts queued so far (one thread: in order)."""
        queue = self.__dict__.get("_access_writer")
        if queue is not None:
            queue.submit(lambda: None).result()

    def _close_access(self) -> None:
        """Write the read counts still queued, then stop their thread."""
        queue = self.__dict__.pop("_access_writer", None)
        if queue is not None:
            queue.shutdown(wait=True)

    def move_access(self, kind: str, moves: Sequence[tuple[str, str]]) -> None:
        def op(conn) -> None:
            for old, new in moves:
                if old == new:
                    continue
                # SQLite's UPDATE OR REPLACE: the moved count replaces one the new key had.
                if _locks(
                    conn, "document_access WHERE kind = %s AND key = %s FOR UPDATE", kind, old
                ):
                    conn.execute(
                        "DELETE FROM document_access WHERE kind = %s AND key = %s", (kind, new)
                    )
                    conn.execute(
                        "UPDATE document_access SET key = %s WHERE kind = %s AND key = %s",
                        (new, kind, old),
                    )

        self._transaction(op)


_ACCESS_LOCK = threading.Lock()


def _access_failed(done: Future) -> None:
    exc = done.exception()
    if exc is not None and not isinstance(exc, StoreUnavailable):
        log.warning("read counts were not written: %s", exc)
