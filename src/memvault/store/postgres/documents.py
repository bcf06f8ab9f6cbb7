"""The search index in PostgreSQL: documents, their postings, vectors, access and cursors.

It answers a ``LexicalQuery`` exactly as the SQLite engine's FTS5 table does, from a table
of postings rather than a ``tsvector``: PostgreSQL's parsers would split and fold the
analyzed text their own way, and its ranking is not BM25. Each field's analyzed text is
cut into tokens by SQLite's own FTS5 ``unicode61`` tokenizer (in memory, in process), so
the terms, their positions and each document's length are those FTS5 holds. Matching
follows the FTS5 expression ``sqlite_documents.fts5_match`` builds (any-term OR, required
phrases, prefixes and anchor, per-field search, the filters), and the score is FTS5's
``bm25()`` with column weights, computed in SQL in the same order of operations:

    idf = ln((N - n + 0.5) / (n + 0.5)), 1e-6 where not positive
    score = sum over phrases of idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl))

with N the documents indexed, n those holding the phrase (in its fields, whatever the
filters), f the phrase's hits weighted by field, D the document's tokens over every field
and its scope tokens, avgdl the mean of D, k1 = 1.2 and b = 0.75.

Documents are keyed by ``(kind, key)``. A write whose content hash is unchanged refreshes
only its bookkeeping; a changed one gets new postings and, when what is embedded changed, a
new revision and no vector until the embedding worker catches up. Every write takes the
index's advisory lock first and draws ids and revisions under it, so they become visible in
the order they were drawn. Vectors are kept as the bytes SQLite keeps (pgvector is not
used); the in-process vector index reads them with ``vectors(model)``.

What a query costs grows with the postings of its terms, each read once from the primary
key (an idf needs every document holding a phrase, whatever the filters or the newest
window). A phrase also reads its tokens' positions from the table, so a phrase of words
found in most documents costs most: at 20,000 documents about a second, where FTS5 takes
tens of milliseconds. Queries of rarer terms take what they take on SQLite.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from memvault import jsontext
from memvault.domain import Document, DocumentDraft
from memvault.errors import StoreUnavailable
from memvault.store.contract import FIELDS, LexicalQuery, SearchIndex

log = logging.getLogger(__name__)

# pg_advisory_xact_lock key of the index's writes (beside the event log's, 0x6D76_0001).
DOCUMENTS_LOCK = 0x6D76_0010

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6

# The scope tokens FTS5 counts in a document's length: its kind, live or archived, and its
# project when it has one (``sqlite_documents.scope``).
_SCOPE_TOKENS = 2

DOCUMENT_COLUMNS = """
d.id, d.kind, d.key, d.project, d.session_id, d.title, d.summary, d.body, d.importance,
d.updated_at, d.path, d.event_ids, d.archived, d.meta, coalesce(a.count, 0), a.last_accessed
"""
_FROM = "FROM documents d LEFT JOIN document_access a ON a.kind = d.kind AND a.key = d.key"

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


# -- tokens -------------------------------------------------------------------------------


class _Tokenizer(threading.local):
    """FTS5's unicode61 tokenizer (remove_diacritics 0, as the SQLite index is declared),
    through an in-memory FTS5 table and its vocabulary: one per thread."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", check_same_thread=False)
        self.conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(c, tokenize = 'unicode61 remove_diacritics 0')"
        )
        self.conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")

    def split(self, texts: Sequence[str]) -> list[list[str]]:
        """The tokens of each text, in order (a token's place in its list is its offset)."""
        out: list[list[str]] = [[] for _ in texts]
        conn = self.conn
        conn.executemany("INSERT INTO t (rowid, c) VALUES (?, ?)", enumerate(texts))
        found = conn.execute("SELECT term, doc FROM v ORDER BY doc, offset")
        for term, doc in found:
            out[doc].append(term)
        conn.execute("DELETE FROM t")
        return out


_tokenizer = _Tokenizer()


# In ASCII, unicode61 (token characters L* N* Co) keeps letters and digits, folded to lower
# case, and separates at everything else: most analyzed text needs no SQLite round.
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """The tokens FTS5 indexes (or asks for) in each text."""
    out: list[list[str]] = []
    rest: list[int] = []
    for text in texts:
        if text.isascii():
            out.append(_ASCII_TOKEN.findall(text.lower()))
        else:
            rest.append(len(out))
            out.append([])
    if rest:
        for place, tokens in zip(rest, _tokenizer.split([texts[i] for i in rest]), strict=True):
            out[place] = tokens
    return out


@functools.lru_cache(maxsize=16384)
def _query_tokens(text: str) -> tuple[str, ...]:
    return tuple(tokenize([text])[0])


def postings(doc_id: int, fields: Sequence[list[str]]) -> tuple[list[tuple], int]:
    """The postings rows of a document's four fields' tokens, and how many they are."""
    rows, length = [], 0
    for field, tokens in enumerate(fields):
        length += len(tokens)
        places: dict[str, list[int]] = {}
        for offset, token in enumerate(tokens):
            places.setdefault(token, []).append(offset)
        rows += [(term, doc_id, field, len(at), at) for term, at in places.items()]
    return rows, length


def scope_length(draft: DocumentDraft) -> int:
    return _SCOPE_TOKENS + (1 if draft.project else 0)


# -- the query ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Phrase:
    """One FTS5 phrase: its tokens (the last a prefix when ``prefix``) and the fields
    (column numbers) it is looked for in."""

    tokens: tuple[str, ...]
    prefix: bool
    fields: tuple[int, ...]


@dataclass(slots=True)
class Expression:
    """A LexicalQuery as FTS5 reads ``fts5_match``'s text: its phrases in the order they
    appear there (the order bm25() adds them), the clauses a match must hold (each one of
    several phrases) and, when there are none, the phrases one of which it must hold."""

    phrases: list[Phrase]
    required: list[list[int]]
    optional: list[int]


def _fields(fields: Sequence[str]) -> tuple[int, ...]:
    unknown = set(fields) - set(FIELDS)
    if unknown or not fields:
        raise ValueError(f"the index has no field {sorted(unknown)}; it has {FIELDS}")
    return tuple(sorted({FIELDS.index(f) for f in fields}))


def expression(query: LexicalQuery) -> Expression:
    own, searched = _fields(query.required_fields), _fields(query.fields)
    phrases: list[Phrase] = []

    def phrase(text: str, fields: tuple[int, ...], prefix: bool = False) -> int:
        phrases.append(Phrase(_query_tokens(text), prefix, fields))
        return len(phrases) - 1

    required = [[phrase(" ".join(p), own)] for p in query.phrases]
    required += [[phrase(start, own, prefix=True) for start in p] for p in query.prefixes]
    if query.anchor:
        anchor = [phrase(t, searched) for t in query.anchor]
        required += [[i] for i in anchor] if query.all_of else [anchor]
    optional = [phrase(t, searched) for t in query.terms if t not in query.anchor]
    return Expression(phrases, required, [] if required else optional)


def _like(start: str) -> str:
    escaped = start.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def _token_rows(
    token: str, prefix: bool, fields: tuple[int, ...], table: str = "document_terms"
) -> tuple[str, list]:
    where = f"{table}.term LIKE %s" if prefix else f"{table}.term = %s"
    value = _like(token) if prefix else token
    return f"{where} AND {table}.field = ANY(%s::smallint[])", [value, list(fields)]


def phrase_sql(phrase: Phrase, weight: str) -> tuple[str, list]:
    """(document id, weighted hits) of every document holding the phrase in its fields:
    FTS5's instances of it, each counted with its field's weight (``weight`` is the SQL of
    the weight of field ``{field}``)."""
    last = len(phrase.tokens) - 1
    if last == 0:
        where, params = _token_rows(phrase.tokens[0], phrase.prefix, phrase.fields)
        return (
            f"SELECT document_id AS id, sum(frequency * {weight.format(field='field')}) AS f "
            f"FROM document_terms WHERE {where} GROUP BY document_id",
            params,
        )
    # A phrase: rows of its tokens in the same field of the same document (read in index
    # order), then the places where each token follows the one before.
    rows, where, params = [], [], []
    for i, token in enumerate(phrase.tokens):
        condition, more = _token_rows(token, phrase.prefix and i == last, phrase.fields, f"t{i}")
        where.append(condition)
        params += more
        rows.append(f"document_terms t{i}")
        if i:
            where.append(f"t{i}.document_id = t0.document_id AND t{i}.field = t0.field")
    follows = " AND ".join(f"p + {i} = ANY(t{i}.positions)" for i in range(1, last + 1))
    hits = f"(SELECT count(*) FROM unnest(t0.positions) AS p WHERE {follows})"
    return (
        f"SELECT id, sum(hits * {weight.format(field='field')}) AS f FROM "
        f"(SELECT t0.document_id AS id, t0.field AS field, {hits} AS hits "
        f"FROM {', '.join(rows)} WHERE {' AND '.join(where)}) x "
        "WHERE hits > 0 GROUP BY id",
        params,
    )


def _float(value: float) -> str:
    """A float as SQL that reads back as the same double."""
    number = float(value)
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"not a finite weight: {value!r}")
    return f"{number!r}::float8"


def _weight(weights: Sequence[float]) -> str:
    return "(ARRAY[" + ", ".join(_float(w) for w in weights) + "])[{field} + 1]"


def _bm25_term(j: int) -> str:
    """Phrase ``j``'s share of bm25(), in fts5_aux.c's order of operations."""
    k1, b, f = _float(K1), _float(B), f"m.f{j}"
    return (
        f"CASE WHEN {f} IS NULL THEN 0::float8 ELSE i.idf{j} * (({f} * ({k1} + 1.0::float8)) "
        f"/ ({f} + {k1} * (1::float8 - {b} + {b} * d.length::float8 / t.avgdl))) END"
    )


def _idf(j: int) -> str:
    """FTS5's idf of phrase ``j``: from the documents holding it, whatever the filters, and
    1e-6 where it is not positive."""
    hits = f"(SELECT count(*) FROM p{j})::float8"
    value = f"ln(((t.n - {hits}) + 0.5::float8) / ({hits} + 0.5::float8))"
    floored = f"CASE WHEN v > 0::float8 THEN v ELSE {_float(IDF_FLOOR)} END"
    return f"(SELECT {floored} FROM (SELECT {value} AS v) x) AS idf{j}"


def search_sql(
    query: LexicalQuery,
    *,
    kinds: Sequence[str],
    project: str | None,
    include_archived: bool,
    weights: tuple[float, float, float, float],
    newest: int | None = None,
) -> tuple[str, list] | None:
    """The statement that scores a query's matches, best first (its last parameter: the
    limit); None when nothing can match.

    Each phrase's documents are found once (``p<j>``); they are gathered by document in one
    grouping, never joined to one another, so the work grows with the postings read
    whatever the planner guesses of their number."""
    expr = expression(query)
    weight = _weight(weights)
    ctes: dict[Phrase, int] = {}
    parts, params = [], []
    for phrase in expr.phrases:
        if phrase.tokens and phrase not in ctes:
            j = ctes[phrase] = len(ctes)
            body, more = phrase_sql(phrase, weight)
            parts.append(f"p{j} AS ({body})")
            params += more
    clauses = expr.required or [expr.optional]
    # A phrase with no tokens matches nothing (FTS5 makes it an empty node).
    if not ctes or any(all(expr.phrases[i] not in ctes for i in c) for c in clauses):
        return None
    numbers = list(ctes.values())
    parts.append(
        "hits AS (" + " UNION ALL ".join(f"SELECT id, {j} AS p, f FROM p{j}" for j in numbers) + ")"
    )
    floor = ""
    if newest is not None:
        floor = "WHERE id > (SELECT coalesce(max(id), 0) FROM documents) - %s "
        params.append(newest)
    parts.append(
        "m AS (SELECT id, "
        + ", ".join(f"sum(f) FILTER (WHERE p = {j}) AS f{j}" for j in numbers)
        + f" FROM hits {floor}GROUP BY id)"
    )
    parts.append(
        "t AS (SELECT documents::float8 AS n, tokens::float8 / documents::float8 AS avgdl "
        "FROM document_totals)"
    )
    parts.append("i AS (SELECT " + ", ".join(_idf(j) for j in numbers) + " FROM t)")

    def holds(index: int) -> str:
        j = ctes.get(expr.phrases[index])
        return "false" if j is None else f"m.f{j} IS NOT NULL"

    where = ["(" + " OR ".join(holds(i) for i in clause) + ")" for clause in clauses]
    where.append("d.kind = ANY(%s::text[])")
    params.append(list(kinds))
    if project is not None:
        where.append("d.scope_project = %s")
        params.append(project)
    if not include_archived:
        where.append("NOT d.archived")
    score = " + ".join(["0::float8"] + [_bm25_term(ctes[p]) for p in expr.phrases if p in ctes])
    sql = (
        f"WITH {', '.join(parts)} "
        f"SELECT d.id, {score} AS score FROM m JOIN documents d ON d.id = m.id "
        f"CROSS JOIN t CROSS JOIN i WHERE {' AND '.join(where)} "
        "ORDER BY score DESC, d.id LIMIT %s"
    )
    return sql, params


def phrase_count_sql(phrase: Phrase) -> tuple[str, list]:
    """The documents holding a phrase in its fields, counted up to a limit (the last
    parameter)."""
    body, params = phrase_sql(phrase, "1")
    return f"SELECT count(*) FROM ({body} LIMIT %s) x", params


# -- writes -------------------------------------------------------------------------------


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
    count, tokens, last_id, last_revision = conn.execute(
        "SELECT documents, tokens, last_id, last_revision FROM document_totals FOR UPDATE"
    ).fetchone()
    for kind, key in dict.fromkeys(deletes):
        row = conn.execute(
            "DELETE FROM documents WHERE kind = %s AND key = %s RETURNING id, length", (kind, key)
        ).fetchone()
        if row:
            # Its reads go with it: a later document of the same name starts afresh.
            conn.execute("DELETE FROM document_access WHERE kind = %s AND key = %s", (kind, key))
            conn.execute("DELETE FROM document_terms WHERE document_id = %s", (row[0],))
            conn.execute("DELETE FROM document_vectors WHERE document_id = %s", (row[0],))
            count, tokens = count - 1, tokens - row[1]
    stored = _stored(conn, upserts)
    split = tokenize([text for draft in upserts for text in draft.terms])
    fresh: dict[int, list[tuple]] = {}
    # Sent without waiting for each answer; nothing below reads one back.
    with conn.pipeline():
        for n, draft in enumerate(upserts):
            row = stored.get((draft.kind, draft.key))
            project = draft.project or None
            if row and row[1] == draft.content_hash:
                length = row[4] - row[5] + scope_length(draft)
                conn.execute(
                    _REFRESH, (draft.mtime, draft.archived, draft.path, project, length, row[0])
                )
                tokens += length - row[4]
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
                conn.execute("DELETE FROM document_terms WHERE document_id = %s", (doc_id,))
                if revision != row[2]:
                    conn.execute("DELETE FROM document_vectors WHERE document_id = %s", (doc_id,))
                tokens += length - row[4]
            else:
                last_id = doc_id
                conn.execute(_INSERT, (doc_id, draft.kind, draft.key, *values))
                count, tokens = count + 1, tokens + length
            fresh[doc_id] = rows  # a document written twice in one batch: the last counts
            stored[(draft.kind, draft.key)] = (
                doc_id,
                draft.content_hash,
                revision,
                _text(draft.embed_text),
                length,
                scope_length(draft),
            )
        conn.execute(
            "UPDATE document_totals SET documents = %s, tokens = %s, last_id = %s, "
            "last_revision = %s",
            (count, tokens, last_id, last_revision),
        )
        if cursor is not None:
            set_cursor(conn, *cursor)
    if fresh:
        with conn.cursor().copy(
            "COPY document_terms (term, document_id, field, frequency, positions) FROM STDIN"
        ) as copy:
            copy.write("".join(_copy_line(r) for rows in fresh.values() for r in rows))


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
        f"{_SCOPE_TOKENS} + (scope_project IS NOT NULL)::int FROM documents "
        "WHERE (kind, key) IN (SELECT * FROM unnest(%s::text[], %s::text[])) FOR UPDATE",
        ([d.kind for d in upserts], [d.key for d in upserts]),
    )
    return {(row[0], row[1]): row[2:] for row in rows}


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
        current = conn.execute(
            "SELECT 1 FROM documents WHERE id = %s AND revision = %s FOR SHARE",
            (doc_id, revision),
        ).fetchone()
        if current:
            conn.execute(
                "INSERT INTO document_vectors (document_id, model, vector) VALUES (%s, %s, %s) "
                "ON CONFLICT (document_id) DO UPDATE SET model = excluded.model, "
                "vector = excluded.vector",
                (doc_id, model, bytes(blob)),
            )
    set_cursor(conn, *cursor)


# -- reads --------------------------------------------------------------------------------


def to_document(row: tuple) -> Document:
    return Document(
        id=row[0],
        kind=row[1],
        key=row[2],
        project=row[3],
        session_id=row[4],
        title=row[5],
        summary=row[6],
        body=row[7],
        importance=row[8],
        updated_at=row[9],
        path=row[10],
        event_ids=json.loads(row[11]),
        archived=bool(row[12]),
        meta=json.loads(row[13]),
        access_count=row[14],
        last_accessed=row[15],
    )


def _no_jit(conn) -> None:
    """No JIT for this transaction: these statements, many small CTEs estimated high, run
    in milliseconds, and compiling them would take seconds."""
    conn.execute("SET LOCAL jit = off")


class PostgresSearchIndex(SearchIndex):
    """The search index part of the PostgreSQL store. Every statement runs through the
    store's ``_transaction``, so a database that cannot be reached fails as
    ``StoreUnavailable`` (a 503), not as a driver error."""

    _transaction: Callable

    def _rows(self, sql: str, params: Sequence | None = None) -> list[tuple]:
        return self._transaction(lambda conn: conn.execute(sql, params).fetchall())

    def _value(self, sql: str, params: Sequence | None = None):
        row = self._transaction(lambda conn: conn.execute(sql, params).fetchone())
        return row[0] if row else None

    def write_documents(
        self,
        upserts: Sequence[DocumentDraft] = (),
        deletes: Sequence[tuple[str, str]] = (),
        *,
        cursor: tuple[str, int] | None = None,
    ) -> None:
        upserts, deletes = list(upserts), list(deletes)
        self._transaction(lambda conn: write_documents(conn, upserts, deletes, cursor))

    def cursor(self, name: str) -> int:
        value = self._value("SELECT value FROM cursors WHERE name = %s", (name,))
        return value if value is not None else 0

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
        if query.empty or not kinds:
            return []
        built = search_sql(
            query,
            kinds=kinds,
            project=project,
            include_archived=include_archived,
            weights=weights,
            newest=newest,
        )
        if built is None:
            return []
        sql, params = built

        def op(conn) -> list[tuple]:
            _no_jit(conn)
            return conn.execute(sql, (*params, limit)).fetchall()

        return [(row[0], row[1]) for row in self._transaction(op)]

    def term_counts(self, terms: Sequence[str], *, cap: int) -> dict[str, int]:
        def op(conn) -> dict[str, int]:
            _no_jit(conn)
            found = {}
            for term in terms:
                phrase = Phrase(_query_tokens(term), False, _fields(FIELDS))
                if not phrase.tokens:
                    found[term] = 0
                    continue
                sql, params = phrase_count_sql(phrase)
                found[term] = conn.execute(sql, (*params, cap + 1)).fetchone()[0]
            return found

        return self._transaction(op)

    def document_count(self) -> int:
        return self._value("SELECT documents FROM document_totals")

    def documents(self, ids: Sequence[int]) -> dict[int, Document]:
        rows = self._rows(
            f"SELECT {DOCUMENT_COLUMNS} {_FROM} WHERE d.id = ANY(%s::bigint[])", (list(ids),)
        )
        return {row[0]: to_document(row) for row in rows}

    def document(self, kind: str, key: str) -> Document | None:
        rows = self._rows(
            f"SELECT {DOCUMENT_COLUMNS} {_FROM} WHERE d.kind = %s AND d.key = %s", (kind, key)
        )
        return to_document(rows[0]) if rows else None

    def list_documents(
        self,
        kind: str,
        *,
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 50,
        offset: int = 0,
    ) -> list[Document]:
        where, params = ["d.kind = %s"], [kind]
        if project is not None:
            where.append("d.project = %s")
            params.append(project)
        if not include_archived:
            where.append("NOT d.archived")
        rows = self._rows(
            f"SELECT {DOCUMENT_COLUMNS} {_FROM} WHERE {' AND '.join(where)} "
            "ORDER BY d.updated_at DESC, d.id DESC LIMIT %s OFFSET %s",
            (*params, limit, offset),
        )
        return [to_document(row) for row in rows]

    def document_stamps(self, kind: str) -> dict[str, tuple[str, float | None]]:
        rows = self._rows("SELECT key, content_hash, mtime FROM documents WHERE kind = %s", (kind,))
        return {row[0]: (row[1], row[2]) for row in rows}

    def documents_to_embed(self, after_revision: int, *, limit: int) -> list[tuple[int, int, str]]:
        rows = self._rows(
            "SELECT id, revision, embed_text FROM documents WHERE revision > %s "
            "ORDER BY revision LIMIT %s",
            (after_revision, limit),
        )
        return [(row[0], row[1], row[2]) for row in rows]

    def write_vectors(
        self, model: str, vectors: Sequence[tuple[int, int, bytes]], *, cursor: tuple[str, int]
    ) -> None:
        vectors = list(vectors)
        self._transaction(lambda conn: write_vectors(conn, model, vectors, cursor))

    def vectors(self, model: str) -> list[tuple[int, str, bytes]]:
        rows = self._rows(
            "SELECT v.document_id, d.kind, v.vector FROM document_vectors v "
            "JOIN documents d ON d.id = v.document_id WHERE v.model = %s",
            (model,),
        )
        return [(row[0], row[1], bytes(row[2])) for row in rows]

    def vector_changes(
        self, model: str, after_revision: int, through_revision: int, *, limit: int
    ) -> list[tuple[int, str, int, bytes | None]]:
        rows = self._rows(
            "SELECT d.id, d.kind, d.revision, v.vector FROM documents d "
            "LEFT JOIN document_vectors v ON v.document_id = d.id AND v.model = %s "
            "WHERE d.revision > %s AND d.revision <= %s ORDER BY d.revision LIMIT %s",
            (model, after_revision, through_revision, limit),
        )
        return [(row[0], row[1], row[2], None if row[3] is None else bytes(row[3])) for row in rows]

    def document_kinds(self, ids: Sequence[int]) -> dict[int, str]:
        rows = self._rows(
            "SELECT id, kind FROM documents WHERE id = ANY(%s::bigint[])", (list(ids),)
        )
        return dict(rows)

    def document_ids(
        self, *, kinds: Sequence[str], project: str, include_archived: bool = False
    ) -> list[int]:
        sql = "SELECT id FROM documents WHERE project = %s AND kind = ANY(%s::text[])"
        if not include_archived:
            sql += " AND NOT archived"
        rows = self._rows(sql + " ORDER BY id", (project, list(kinds)))
        return [row[0] for row in rows]

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
                moved = conn.execute(
                    "SELECT 1 FROM document_access WHERE kind = %s AND key = %s FOR UPDATE",
                    (kind, old),
                ).fetchone()
                if moved:
                    conn.execute(
                        "DELETE FROM document_access WHERE kind = %s AND key = %s", (kind, new)
                    )
                    conn.execute(
                        "UPDATE document_access SET key = %s WHERE kind = %s AND key = %s",
                        (new, kind, old),
                    )

        self._transaction(op)

    def documents_since(self, revision: int) -> int:
        return self._value("SELECT count(*) FROM documents WHERE revision > %s", (revision,))

    def fragment_counts(self) -> tuple[int, int]:
        counts = dict(
            self._rows(
                "SELECT archived, count(*) FROM documents WHERE kind = 'fragment' GROUP BY archived"
            )
        )
        return counts.get(False, 0), counts.get(True, 0)


_ACCESS_LOCK = threading.Lock()


def _access_failed(done: Future) -> None:
    exc = done.exception()
    if exc is not None and not isinstance(exc, StoreUnavailable):
        log.warning("read counts were not written: %s", exc)
