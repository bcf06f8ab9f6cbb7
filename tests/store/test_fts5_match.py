"""The SQLite engine spells a LexicalQuery as an FTS5 expression over analyzed terms."""

from __future__ import annotations

import pytest

from memvault.domain import DocumentDraft
from memvault.search.query import parse
from memvault.store import LexicalQuery
from memvault.store.sqlite.fts5 import (
    ANY_DOCUMENT,
    ARCHIVED_TOKEN,
    LIVE_TOKEN,
    fts5_match,
    scope,
)

SEARCHED = "{title body context dates}"


@pytest.mark.sqlite_only  # FTS5 syntax
def test_terms_alone_match_any_of_them():
    assert fts5_match(parse("The failing websocket tests").match()) == " OR ".join(
        f'{SEARCHED} : "{term}"' for term in ("fail", "websocket", "test")
    )


@pytest.mark.sqlite_only  # FTS5 syntax
def test_a_phrase_is_required_in_the_documents_own_text_and_terms_stay_optional():
    assert fts5_match(parse('"connection pool" timeout').match()) == (
        f'{{title body}} : "connect pool" AND ({SEARCHED} : "timeout" OR {ANY_DOCUMENT})'
    )


@pytest.mark.sqlite_only  # FTS5 syntax
def test_a_prefix_matches_any_of_its_starts():
    assert fts5_match(parse("deplo*").match()) == '({title body} : "deplo"*)'
    assert fts5_match(parse("connection*").match()) == (
        '({title body} : "connection"* OR {title body} : "connect"*)'
    )


@pytest.mark.sqlite_only  # FTS5 syntax
def test_an_anchor_requires_one_of_the_rare_terms_and_still_counts_the_rest():
    query = parse("socket timeout retry")
    anchored = fts5_match(query.match(anchor=("socket",)))
    assert anchored.startswith(f'({SEARCHED} : "socket") AND (')
    assert anchored.count('"socket"') == 1 and anchored.count('"retri"') == 1
    both = fts5_match(query.match(anchor=("socket", "retri"), all_of=True))
    assert f'"socket" AND {SEARCHED} : "retri"' in both


@pytest.mark.sqlite_only  # FTS5 syntax
def test_quotes_inside_a_term_cannot_break_the_expression():
    expression = fts5_match(LexicalQuery(terms=('he"llo', "x")))
    assert expression == f'{SEARCHED} : "he""llo" OR {SEARCHED} : "x"'


@pytest.mark.sqlite_only  # FTS5 syntax
def test_the_fields_asked_are_the_columns_searched():
    query = LexicalQuery(terms=("x",), fields=("title",))
    assert fts5_match(query) == '{title} : "x"'
    with pytest.raises(ValueError, match="scope"):
        fts5_match(LexicalQuery(terms=("x",), fields=("scope",)))


def _draft(key: str, body: str, *, kind: str = "fragment", archived: bool = False):
    return DocumentDraft(
        kind=kind,
        key=key,
        title="",
        summary="",
        body=body,
        terms=("", body, "", ""),
        embed_text=body,
        importance=0.5,
        updated_at="2026-01-01T00:00:00.000Z",
        content_hash=body,
        project="p",
        archived=archived,
    )


@pytest.mark.parametrize("kind", ["fragment", "summary", "observation"])
@pytest.mark.parametrize("archived", [False, True])
def test_a_required_phrase_finds_documents_holding_none_of_the_optional_terms(
    store, kind, archived
):
    store.write_documents([_draft("a", "connect pool", kind=kind, archived=archived)])
    query = LexicalQuery(terms=("timeout",), phrases=(("connect", "pool"),))
    found = store.lexical_search(query, kinds=[kind], project="p", include_archived=True)
    assert [doc_id for doc_id, _ in found] == [store.document(kind, "a").id]
    assert scope(_draft("a", "", archived=archived)).split()[1] == (
        ARCHIVED_TOKEN if archived else LIVE_TOKEN
    )


def test_filters_keep_out_other_kinds_projects_and_archived_documents(store):
    store.write_documents(
        [
            _draft("live", "socket"),
            _draft("gone", "socket", archived=True),
            _draft("obs", "socket", kind="observation"),
        ]
    )
    query = LexicalQuery(terms=("socket",))
    found = store.lexical_search(query, kinds=["fragment"], project="p")
    assert [i for i, _ in found] == [store.document("fragment", "live").id]
    assert store.lexical_search(query, kinds=["fragment"], project="elsewhere") == []
    both = store.lexical_search(query, kinds=["fragment"], include_archived=True)
    assert len(both) == 2


@pytest.mark.sqlite_only  # FTS5 syntax
def test_alternatives_are_optional_phrases_beside_the_terms():
    query = LexicalQuery(terms=("pool",), alternatives=(("连接", "接池"), ("超时",)))
    assert fts5_match(query) == (
        f'{SEARCHED} : "pool" OR {SEARCHED} : "连接 接池" OR {SEARCHED} : "超时"'
    )
    required = LexicalQuery(phrases=(("connect", "pool"),), alternatives=(("超时",),))
    assert fts5_match(required) == (
        f'{{title body}} : "connect pool" AND ({SEARCHED} : "超时" OR {ANY_DOCUMENT})'
    )
