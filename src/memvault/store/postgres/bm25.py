"""PostgreSQL's BM25: a ``LexicalQuery`` answered exactly as the SQLite engine's FTS5 table
answers it, from a table of postings rather than a ``tsvector``.

PostgreSQL's parsers would split and fold the analyzed text their own way, and its ranking
is not BM25. Each field's analyzed text is cut into tokens by SQLite's own FTS5
``unicode61`` tokenizer (in memory, in process), so the terms, their positions and each
document's length are those FTS5 holds. Matching follows the FTS5 expression
``sqlite.fts5.fts5_match`` builds (any-term OR, required phrases, prefixes and anchor,
per-field search, the filters), and the score is FTS5's ``bm25()`` with column weights,
computed in SQL in the same order of operations:

    idf = ln((N - n + 0.5) / (n + 0.5)), 1e-6 where not positive
    score = sum over phrases of idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl))

with N the documents indexed, n those holding the phrase (in its fields, whatever the
filters), f the phrase's hits weighted by field, D the document's tokens over every field
and its scope tokens, avgdl the mean of D, k1 = 1.2 and b = 0.75. N, n and avgdl are
those of one part of the index (``contract.LEXICAL_PARTS``), as SQLite keeps each part in
an FTS5 table of its own: sessions' postings are in ``session_terms``, the rest's in
``document_terms``.

What a query costs grows with the postings of its terms, each read once from the primary
key (an idf needs every document holding a phrase, whatever the filters or the newest
window). A phrase also reads its tokens' positions from the table, so a phrase of words
found in most documents costs most: at 20,000 documents about a second, where FTS5 takes
tens of milliseconds. Queries of rarer terms take what they take on SQLite.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memvault.domain import DocumentDraft
from memvault.store.contract import FIELDS, REST_PART, SESSION_PART, LexicalQuery, part_of
from memvault.store.engine import like_literal

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6

# Each part of the lexical index (``contract.LEXICAL_PARTS``): its postings table, and the
# columns of ``document_totals`` that hold its document count and tokens.
TERMS = {REST_PART: "document_terms", SESSION_PART: "session_terms"}
TOTALS = {REST_PART: ("documents", "tokens"), SESSION_PART: ("session_documents", "session_tokens")}


def terms_table(kind: str) -> str:
    """The postings table of a document of ``kind``."""
    return TERMS[part_of(kind)]


# The scope tokens FTS5 counts in a document's length: its kind, live or archived, and its
# project when it has one (``sqlite.fts5.scope``).
SCOPE_TOKENS = 2

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
def query_tokens(text: str) -> tuple[str, ...]:
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
    return SCOPE_TOKENS + (1 if draft.project else 0)


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


def field_numbers(fields: Sequence[str]) -> tuple[int, ...]:
    unknown = set(fields) - set(FIELDS)
    if unknown or not fields:
        raise ValueError(f"the index has no field {sorted(unknown)}; it has {FIELDS}")
    return tuple(sorted({FIELDS.index(f) for f in fields}))


def expression(query: LexicalQuery) -> Expression:
    own, searched = field_numbers(query.required_fields), field_numbers(query.fields)
    phrases: list[Phrase] = []

    def phrase(text: str, fields: tuple[int, ...], prefix: bool = False) -> int:
        phrases.append(Phrase(query_tokens(text), prefix, fields))
        return len(phrases) - 1

    required = [[phrase(" ".join(p), own)] for p in query.phrases]
    required += [[phrase(start, own, prefix=True) for start in p] for p in query.prefixes]
    if query.anchor:
        anchor = [phrase(t, searched) for t in query.anchor]
        required += [[i] for i in anchor] if query.all_of else [anchor]
    optional = [phrase(t, searched) for t in query.terms if t not in query.anchor]
    optional += [phrase(" ".join(p), searched) for p in query.alternatives if p]
    return Expression(phrases, required, [] if required else optional)


def _token_rows(
    token: str, prefix: bool, fields: tuple[int, ...], table: str = "document_terms"
) -> tuple[str, list]:
    where = f"{table}.term LIKE %s" if prefix else f"{table}.term = %s"
    value = like_literal(token) + "%" if prefix else token
    return f"{where} AND {table}.field = ANY(%s::smallint[])", [value, list(fields)]


def phrase_sql(phrase: Phrase, weight: str, table: str = "document_terms") -> tuple[str, list]:
    """(document id, weighted hits) of every document holding the phrase in its fields, in
    one postings ``table``: FTS5's instances of it, each counted with its field's weight
    (``weight`` is the SQL of the weight of field ``{field}``)."""
    last = len(phrase.tokens) - 1
    if last == 0:
        where, params = _token_rows(phrase.tokens[0], phrase.prefix, phrase.fields, table)
        return (
            f"SELECT document_id AS id, sum(frequency * {weight.format(field='field')}) AS f "
            f"FROM {table} WHERE {where} GROUP BY document_id",
            params,
        )
    # A phrase: rows of its tokens in the same field of the same document (read in index
    # order), then the places where each token follows the one before.
    rows, where, params = [], [], []
    for i, token in enumerate(phrase.tokens):
        condition, more = _token_rows(token, phrase.prefix and i == last, phrase.fields, f"t{i}")
        where.append(condition)
        params += more
        rows.append(f"{table} t{i}")
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
    part: str = REST_PART,
    per_kind: bool = False,
) -> tuple[str, list] | None:
    """The statement that scores a query's matches in one part of the index, by that part's
    statistics, best first (its last parameter: the limit); None when nothing can match.
    With ``per_kind``, the best of each kind instead, as (kind, id, score), each kind's
    best first (its last two parameters: the kinds and each one's limit): for each kind
    the rows the plain statement of that kind alone returns, the postings read once.

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
            body, more = phrase_sql(phrase, weight, TERMS[part])
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
    if newest is not None and project is None:
        floor = "WHERE id > (SELECT coalesce(max(id), 0) FROM documents) - %s "
        params.append(newest)
    elif newest is not None:  # the project's newest: another's would push its own out
        floor = (
            "WHERE id > coalesce((SELECT id FROM documents WHERE project = %s "
            "ORDER BY id DESC OFFSET %s LIMIT 1), 0) "
        )
        params += [project, newest]
    parts.append(
        "m AS (SELECT id, "
        + ", ".join(f"sum(f) FILTER (WHERE p = {j}) AS f{j}" for j in numbers)
        + f" FROM hits {floor}GROUP BY id)"
    )
    count, tokens = TOTALS[part]
    parts.append(
        f"t AS (SELECT {count}::float8 AS n, {tokens}::float8 / nullif({count}, 0)::float8 "
        "AS avgdl FROM document_totals)"
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
    matches = (
        "FROM m JOIN documents d ON d.id = m.id "
        f"CROSS JOIN t CROSS JOIN i WHERE {' AND '.join(where)}"
    )
    if not per_kind:
        return (
            f"WITH {', '.join(parts)} SELECT d.id, {score} AS score {matches} "
            "ORDER BY score DESC, d.id LIMIT %s"
        ), params
    # Each kind's rows in the order the plain statement sorts them, numbered, and kept up
    # to that kind's limit: the same rows as one statement per kind, in one reading.
    parts.append(
        "ranked AS (SELECT kind, id, score, row_number() OVER "
        "(PARTITION BY kind ORDER BY score DESC, id) AS place FROM "
        f"(SELECT d.kind, d.id, {score} AS score {matches}) s)"
    )
    return (
        f"WITH {', '.join(parts)} SELECT r.kind, r.id, r.score FROM ranked r "
        "JOIN unnest(%s::text[], %s::int[]) AS l(kind, most) ON l.kind = r.kind "
        "WHERE r.place <= l.most ORDER BY r.kind, r.place"
    ), params


def phrase_count_sql(phrase: Phrase, table: str = "document_terms") -> tuple[str, list]:
    """The documents of one postings ``table`` holding a phrase in its fields, counted up
    to a limit (the last parameter)."""
    body, params = phrase_sql(phrase, "1", table)
    return f"SELECT count(*) FROM ({body} LIMIT %s) x", params


def token_counts_sql(table: str) -> str:
    """For each token of an array, by its place in it (from 1), the documents of one
    postings ``table`` holding it in the given fields, counted up to a limit: one statement
    for a request's hundreds of words, where one each cost as many round trips.
    Parameters: the fields, the limit, the tokens."""
    return (
        "SELECT w.n, (SELECT count(*) FROM (SELECT 1 FROM "
        f"{table} t WHERE t.term = w.token AND t.field = ANY(%s::smallint[]) "
        "GROUP BY t.document_id LIMIT %s) x) "
        "FROM unnest(%s::text[]) WITH ORDINALITY AS w(token, n)"
    )


# -- writes -------------------------------------------------------------------------------


def no_jit(conn) -> None:
    """No JIT for this transaction: these statements, many small CTEs estimated high, run
    in milliseconds, and compiling them would take seconds."""
    conn.execute("SET LOCAL jit = off")


def lexical_search(conn, query: LexicalQuery, *, limit: int, **filters) -> list[tuple[int, float]]:
    """(document id, BM25 score) best first, as FTS5 scores them (see above), among the
    documents ``filters`` keep (``search_sql``'s kinds, project, include_archived, weights
    and newest)."""
    if query.empty or not filters["kinds"]:
        return []
    built = search_sql(query, **filters)
    if built is None:
        return []
    sql, params = built
    no_jit(conn)
    return [(row[0], row[1]) for row in conn.execute(sql, (*params, limit)).fetchall()]


def lexical_search_per_kind(
    conn, query: LexicalQuery, *, limits: Mapping[str, int], **filters
) -> dict[str, list[tuple[int, float]]]:
    """The best ``limits[kind]`` of each kind, in one statement: for each kind, the hits
    ``lexical_search`` finds for that kind alone (``filters``: as there, without kinds)."""
    found: dict[str, list[tuple[int, float]]] = {kind: [] for kind in limits}
    if query.empty or not limits:
        return found
    built = search_sql(query, kinds=list(limits), per_kind=True, **filters)
    if built is None:
        return found
    sql, params = built
    no_jit(conn)
    for kind, doc_id, score in conn.execute(sql, (*params, list(limits), list(limits.values()))):
        found[kind].append((doc_id, score))
    return found
