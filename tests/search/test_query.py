"""Query parsing: what a person types becomes the analyzed terms, phrases and prefixes the
index is asked for (each engine spells them: see tests/store/test_fts5_match.py)."""

from __future__ import annotations

from memvault.search.query import parse
from memvault.store import LexicalQuery


def test_plain_words_are_analyzed_terms_any_of_which_may_match():
    query = parse("The failing websocket tests")
    assert query.terms == ("fail", "websocket", "test")
    assert query.match() == LexicalQuery(terms=("fail", "websocket", "test"))


def test_quoted_words_are_a_phrase_that_must_appear():
    query = parse('"connection pool" timeout')
    assert query.phrases == (("connect", "pool"),)
    assert query.match() == LexicalQuery(terms=("timeout",), phrases=(("connect", "pool"),))


def test_a_star_makes_a_prefix():
    query = parse("deplo*")
    assert query.prefixes == (("deplo",),)
    assert query.match() == LexicalQuery(prefixes=(("deplo",),))
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


def test_quotes_inside_terms_are_not_kept():
    query = parse('say "hello')
    assert '"' not in "".join(query.terms)


def test_an_anchor_is_passed_to_the_index_with_the_terms():
    query = parse("socket timeout retry")
    anchored = query.match(anchor=("socket",))
    assert anchored.anchor == ("socket",) and not anchored.all_of
    assert anchored.terms == ("socket", "timeout", "retri")
    assert query.match(anchor=("socket", "retri"), all_of=True).all_of


def test_keeping_drops_plain_terms_only():
    query = parse('"connection pool" socket timeout deplo*').keeping({"socket"})
    assert query.match() == LexicalQuery(
        terms=("socket",), phrases=(("connect", "pool"),), prefixes=(("deplo",),)
    )


def test_a_long_text_is_plain_words_its_quotes_and_stars_its_own():
    # A prompt with a pasted compiler error: "void*" and the quoted name are the log's, not
    # operators; a required prefix there once hid every session that did not say "void".
    pasted = (
        'Program.cs(34): error CS1503: Argument 1: cannot convert from "BlockMerger" to '
        "void* in the merge callback when the tests run"
    )
    query = parse(pasted)
    assert query.prefixes == () and query.phrases == ()
    assert {"void", "blockmerg", "callback"} <= set(query.terms)
    # A short query keeps its operators.
    assert parse('"block merger" void*').prefixes == (("void",),)


def test_its_names_are_asked_as_the_index_holds_them_and_not_the_projects_own():
    text = (
        "C:\\src\\Blast.Test\\AppDataBatchManagerTests.cs: GetAll_ReturnsAll failed in "
        "google_scraper.py, see BlastMerge.cs and BlastMerge.ConsoleApp"
    )
    assert parse(text).names == (
        "AppDataBatchManagerTests",
        "AppDataBatchManager",
        "GetAll_ReturnsAll",
        "google_scraper",
        "BlastMerge",
        "ConsoleApp",
    )
    query = parse(text, project="blastmerge")
    assert "BlastMerge" not in query.names
    # A compound is its whole term and the phrase of its parts (the index writes them after
    # it, so ``GoogleScraper`` and ``google_scraper`` find each other); a name of plain
    # words is the phrase of its words; a name of several pieces, one of them a compound,
    # each piece's whole term.
    assert query.named() == (
        ("appdatabatchmanagertest",),
        ("app", "data", "batch", "manag", "test"),
        ("appdatabatchmanag",),
        ("app", "data", "batch", "manag"),
        ("getal",),
        ("returnsal",),
        ("googl", "scraper"),
        ("consoleapp",),
        ("consol", "app"),
    )
    assert parse("a plain question about the pool").names == ()
