"""Query parsing: what a person types becomes an FTS5 expression over analyzed terms."""

from __future__ import annotations

from memvault.search.query import ANY_DOCUMENT, parse


def test_plain_words_are_analyzed_terms_any_of_which_may_match():
    query = parse("The failing websocket tests")
    assert query.terms == ("fail", "websocket", "test")
    assert query.match() == " OR ".join(
        f'{{title body context dates}} : "{term}"' for term in ("fail", "websocket", "test")
    )


def test_quoted_words_are_a_phrase_that_must_appear():
    query = parse('"connection pool" timeout')
    assert query.phrases == (("connect", "pool"),)
    own = '{title body} : "connect pool"'
    assert query.match() == (
        f'{own} AND ({{title body context dates}} : "timeout" OR {ANY_DOCUMENT})'
    )


def test_a_star_makes_a_prefix():
    query = parse("deplo*")
    assert query.prefixes == (("deplo",),)
    assert query.match() == '({title body} : "deplo"*)'
    # The index holds stems, so a whole word as a prefix also looks for its stem.
    assert parse("connection*").prefixes == (("connection", "connect"),)


def test_a_chinese_prefix_is_the_phrase_of_its_pairs():
    assert parse("数据库*").phrases == (("数据", "据库"),)
    assert parse("数*").prefixes == (("数",),)


def test_chinese_queries_become_the_same_pairs_as_indexed_text():
    assert parse("数据库").terms == ("数据", "据库")
    assert parse("记忆").terms == ("记忆",)


def test_only_stopwords_is_an_empty_query():
    assert parse("the of and").empty
    assert parse('""').empty


def test_quotes_inside_terms_cannot_break_the_expression():
    query = parse('say "hello')
    assert '"' not in "".join(query.terms)
    assert query.match().count('"') % 2 == 0


def test_an_anchor_requires_one_of_the_rare_terms_and_still_counts_the_rest():
    query = parse("socket timeout retry")
    anchored = query.match(anchor=("socket",))
    assert anchored.startswith('({title body context dates} : "socket") AND (')
    assert anchored.count('"socket"') == 1 and anchored.count('"retri"') == 1
    both = query.match(anchor=("socket", "retri"), all_of=True)
    assert '"socket" AND {title body context dates} : "retri"' in both
