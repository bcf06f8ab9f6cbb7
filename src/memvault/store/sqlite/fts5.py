"""The SQLite index's FTS5 side: the scope tokens a document is filtered by, a
``LexicalQuery`` as an FTS5 expression, and BM25 search over the index's two parts:
``documents_fts`` and ``sessions_fts`` (``contract.LEXICAL_PARTS``), each an FTS5 table of
its own, so each has its own document count, lengths and term frequencies."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping, Sequence

from memvault.domain import DocumentDraft
from memvault.store.contract import FIELDS, LEXICAL_PARTS, LexicalQuery, part_of

# The filter tokens of the scope column (see migrations/sqlite/0004_documents.sql), the one
# place they are spelled: ``scope`` writes them, ``fts5_match`` and ``lexical_search`` ask
# for them. They are matched with weight 0, so they never change a score.
KIND_TOKEN = "k{kind}"
LIVE_TOKEN = "live"
ARCHIVED_TOKEN = "archived"
PROJECT_TOKEN = "p{digest}"
# Every document holds one of these: what keeps a group of optional terms from requiring
# any of them.
ANY_DOCUMENT = f"scope : ({LIVE_TOKEN} OR {ARCHIVED_TOKEN})"
TABLES = {part: f"{part}_fts" for part in LEXICAL_PARTS}


def table_of(kind: str) -> str:
    """The FTS5 table a document of ``kind`` is indexed in."""
    return TABLES[part_of(kind)]


def scope(draft: DocumentDraft) -> str:
    """The filter tokens of a document: its kind, its project, live or archived."""
    tokens = [KIND_TOKEN.format(kind=draft.kind), ARCHIVED_TOKEN if draft.archived else LIVE_TOKEN]
    if draft.project:
        tokens.append(project_token(draft.project))
    return " ".join(tokens)


def project_token(project: str) -> str:
    digest = hashlib.blake2b(project.encode("utf-8", "surrogatepass"), digest_size=10)
    return PROJECT_TOKEN.format(digest=digest.hexdigest())


def fts5_match(query: LexicalQuery) -> str:
    """The FTS5 expression of a query: phrases, prefixes and anchor required, terms optional
    but counted."""
    own, searched = _columns(query.required_fields), _columns(query.fields)
    required = [f"{own} : {_quote(' '.join(p))}" for p in query.phrases] + [
        "(" + " OR ".join(f"{own} : {_quote(start)}*" for start in p) + ")" for p in query.prefixes
    ]
    if query.anchor:
        joiner = " AND " if query.all_of else " OR "
        required.append(f"({joiner.join(f'{searched} : {_quote(t)}' for t in query.anchor)})")
    optional = [f"{searched} : {_quote(term)}" for term in query.terms if term not in query.anchor]
    optional += [f"{searched} : {_quote(' '.join(p))}" for p in query.alternatives if p]
    if not required:
        return " OR ".join(optional)
    if not optional:
        return " AND ".join(required)
    # Every term appears once (BM25 would count a repeated one twice); ANY_DOCUMENT keeps
    # the optional group from requiring any of its terms.
    return f"{' AND '.join(required)} AND ({' OR '.join([*optional, ANY_DOCUMENT])})"


def _columns(fields: Sequence[str]) -> str:
    unknown = set(fields) - set(FIELDS)
    if unknown or not fields:
        raise ValueError(f"the index has no field {sorted(unknown)}; it has {FIELDS}")
    return "{" + " ".join(fields) + "}"


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def lexical_search(
    conn: sqlite3.Connection,
    query: LexicalQuery,
    *,
    kinds: Sequence[str],
    project: str | None,
    include_archived: bool,
    limit: int,
    weights: tuple[float, float, float, float],
    newest: int | None = None,
    part: str,
) -> list[tuple[int, float]]:
    """Best matches first in one part of the index, as (document id, BM25 score ≥ 0).
    Filters are part of the FTS5 expression (the scope column), so no row outside them is
    ever scored; ``newest`` limits the search to the documents indexed last (the project's
    last, when it is asked in one)."""
    floor = 0 if newest is None else newest_floor(conn, newest, project)
    expression = _filtered(query, kinds, project, include_archived)
    return _scored(conn, TABLES[part], expression, weights, floor, limit)


def _filtered(
    query: LexicalQuery, kinds: Sequence[str], project: str | None, include_archived: bool
) -> str:
    """The FTS5 expression of ``query`` within its filters (the scope column)."""
    kind_tokens = (KIND_TOKEN.format(kind=kind) for kind in kinds)
    filters = [f"scope : ({' OR '.join(kind_tokens)})"]
    if project is not None:
        filters.append(f"scope : {project_token(project)}")
    if not include_archived:
        filters.append(f"scope : {LIVE_TOKEN}")
    return f"({fts5_match(query)}) AND {' AND '.join(filters)}"


def _scored(
    conn: sqlite3.Connection,
    table: str,
    expression: str,
    weights: tuple[float, float, float, float],
    floor: int,
    limit: int,
) -> list[tuple[int, float]]:
    rows = conn.execute(
        f"SELECT rowid, -bm25({table}, ?, ?, ?, ?, 0.0) AS score FROM {table} "
        f"WHERE {table} MATCH ? AND rowid > ? ORDER BY score DESC LIMIT ?",
        (*weights, expression, floor, limit),
    )
    return [(row[0], row[1]) for row in rows]


def newest_floor(conn: sqlite3.Connection, newest: int, project: str | None) -> int:
    """The id past which the ``newest`` documents last indexed lie: of the whole index, or
    of ``project`` (another project's newer documents would push its own out of it)."""
    if project is None:
        top = conn.execute("SELECT max(id) FROM documents").fetchone()[0] or 0
        return max(top - newest, 0)
    row = conn.execute(
        "SELECT id FROM documents WHERE project = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
        (project, newest),
    ).fetchone()
    return row[0] if row else 0


def lexical_search_per_kind(
    conn: sqlite3.Connection,
    query: LexicalQuery,
    *,
    limits: Mapping[str, int],
    project: str | None,
    include_archived: bool,
    weights: tuple[float, float, float, float],
    newest: int | None = None,
    part: str,
) -> dict[str, list[tuple[int, float]]]:
    """The best ``limits[kind]`` of each kind: one FTS5 query per kind, each scoring only
    its kind's rows (the scope column filters them before any is scored), the newest
    window found once for them all."""
    floor = 0 if newest is None else newest_floor(conn, newest, project)
    return {
        kind: _scored(
            conn,
            TABLES[part],
            _filtered(query, [kind], project, include_archived),
            weights,
            floor,
            limit,
        )
        for kind, limit in limits.items()
    }


def term_counts(
    conn: sqlite3.Connection, terms: Sequence[str], cap: int, parts: Sequence[str] = LEXICAL_PARTS
) -> dict[str, int]:
    """Documents holding each term, in these ``parts``, counted up to ``cap + 1`` (enough to
    tell a rare term from a common one, without reading a common term's whole posting
    list)."""
    found = {}
    for term in terms:
        count = 0
        for table in (TABLES[part] for part in parts):
            if count > cap:
                break
            count += conn.execute(
                f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                (f"{_columns(FIELDS)} : {_quote(term)}", cap + 1 - count),
            ).fetchone()[0]
        found[term] = count
    return found
