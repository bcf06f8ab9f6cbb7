"""The best of each kind, asked at once, is what asking each kind alone finds, on every
engine: the store's ``lexical_search_per_kind`` (one statement per part of the index on
PostgreSQL) gives each kind the ids and scores ``lexical_search`` gives that kind alone,
and the searcher's candidates of each kind (a context request's) are those of a search of
that kind alone, whichever words it asks: all of them, the rare ones, at most ASKED_TERMS,
the newest window (all the words together, else any), and the other language's."""

from __future__ import annotations

import dataclasses

import pytest

from memvault.search import lexical
from memvault.search.documents import terms
from memvault.search.engine import Searcher
from memvault.search.lexical import Scope
from memvault.search.query import parse
from memvault.search.ranking import RELEVANCE_ONLY
from memvault.store import LexicalQuery
from tests.store.test_across_languages import _draft

KINDS = ("fragment", "summary", "session", "observation")
# Written oldest first: the fragments and sessions first, the summaries last, so that a
# window of the newest documents holds the summaries and events but no fragment.
FRAGMENTS = [
    "The connection pool timed out under load; a larger pool fixed the timeout",
    "Pool sizing: one connection per core, a timeout of five seconds",
    "Refresh token rotation fails when two tabs refresh at once",
    "数据库连接池超时，增加连接池大小后解决",
    "The websocket tests fail when the server closes the socket early",
    "Twin note about the pool",
    "Twin note about the pool",
]
SESSIONS = [
    "pool timeout pool timeout debugging the worker pool " * 5,
    "refresh token rotation and the login page",
    "连接池 超时 调优",
    "rename the settings page and its tests",
    "tidy the docs and rerun the tests",
]
OBSERVATIONS = (
    ["连接池超时 第{n}次"] * 4
    + ["token refresh failed {n}"] * 4
    + [
        ("pool timeout in worker {n}", "pool resized to {n}", "ran the linter on file {n}")[n % 3]
        for n in range(36)
    ]
)
SUMMARIES = ["pool notes", "websocket notes", "连接池 笔记", "refresh token notes"]

REQUESTS = [
    "pool timeout",
    "pool",
    "connection pool timeout websocket",
    "refresh token rotation fails",
    "连接池超时",
    "数据库 pool",
    "tests failing in the websocket worker",
    "nothing-matches-this",
    '"connection pool" timeout',
    "pool timeout worker linter file resized notes token refresh tests websocket socket",
]


def _document(kind: str, key: str, text: str, *, project: str = "demo", archived: bool = False):
    draft = _draft(key, text)
    return dataclasses.replace(
        draft,
        kind=kind,
        project=project,
        archived=archived,
        terms=(terms(text[:30]), terms(text), "", draft.terms[3]),
    )


@pytest.fixture
def store(open_store):
    store = open_store()
    store.ensure_session("s1", project="demo", cwd="/src/demo")
    written = [_document("fragment", f"f{n}", text) for n, text in enumerate(FRAGMENTS)]
    written += [_document("fragment", "elsewhere", FRAGMENTS[0], project="other")]
    written += [_document("fragment", "archived", FRAGMENTS[1], archived=True)]
    written += [_document("session", f"s{n}", text) for n, text in enumerate(SESSIONS)]
    written += [
        _document("observation", f"o{n}", t.format(n=n)) for n, t in enumerate(OBSERVATIONS)
    ]
    written += [_document("summary", f"m{n}", text) for n, text in enumerate(SUMMARIES)]
    store.write_documents(written)
    store.sync()
    return store


def test_each_kinds_best_are_those_a_search_of_it_alone_finds(store):
    queries = [parse(text).match() for text in REQUESTS] + [
        LexicalQuery(terms=("pool", "timeout"), anchor=("pool", "timeout"), all_of=True),
        LexicalQuery(alternatives=(("连接", "接池"), ("超时",), ("token",))),
    ]
    asked = 0
    for query in queries:
        for limits in [dict.fromkeys(KINDS, 100), {"fragment": 2, "observation": 5, "session": 1}]:
            for filters in [
                {},
                {"project": "demo"},
                {"include_archived": True},
                {"newest": 20},
                {"newest": 3, "weights": (2.0, 1.0, 0.25, 0.0)},
            ]:
                each = store.lexical_search_per_kind(query, limits=limits, **filters)
                alone = {
                    kind: store.lexical_search(query, kinds=[kind], limit=limit, **filters)
                    for kind, limit in limits.items()
                }
                assert each == alone, (query, limits, filters)
                asked += sum(map(len, each.values()))
    assert asked
    # A limit below a kind's matches keeps that many of its best.
    found = store.lexical_search_per_kind(parse("pool").match(), limits={"fragment": 2})
    assert len(found["fragment"]) == 2


def test_a_kind_asked_for_none_or_absent_from_the_index_has_an_empty_list(store):
    query = parse("pool").match()
    found = store.lexical_search_per_kind(query, limits={"fragment": 0, "summary": 3})
    assert found["fragment"] == [] and found["summary"]
    assert store.lexical_search_per_kind(query, limits={}) == {}
    nothing = store.lexical_search_per_kind(LexicalQuery(), limits={"session": 3})
    assert nothing == {"session": []}


# The searcher's constants that decide which words are asked: the defaults (a small index
# is asked every word), rare words only, at most two words, and every word common (the
# newest twelve documents, all words together, else any: the summaries hold one word and
# the events both, so the summaries are asked again with any).
SETTINGS = [
    {},
    {"RARE_DOCUMENTS": 3, "RARE_SHARE": 0.0},
    {"RARE_DOCUMENTS": 30, "RARE_SHARE": 0.0, "ASKED_TERMS": 2},
    {"RARE_DOCUMENTS": 1, "RARE_SHARE": 0.0, "COMMON_WINDOW": 12},
]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(s) or "defaults")
def test_a_context_requests_candidates_of_each_kind_are_those_of_a_search_of_it_alone(
    store, monkeypatch, settings
):
    for name, value in settings.items():
        monkeypatch.setattr(lexical, name, value)
    candidates = Searcher(store, weights=RELEVANCE_ONLY).lexical
    asked = 0
    for text in REQUESTS:
        query = parse(text)
        for pools in [dict.fromkeys(KINDS, 100), {"fragment": 2, "summary": 1, "observation": 4}]:
            for project, archived in [("demo", False), (None, True)]:
                scope = Scope(list(pools), project, archived)
                each = candidates.per_kind(query, scope, pools)
                alone = {
                    kind: candidates.together(
                        query, dataclasses.replace(scope, kinds=[kind]), pool=pool
                    )
                    for kind, pool in pools.items()
                }
                assert each == alone, (text, pools, project)
                asked += sum(map(len, each.values()))
    assert asked


def test_the_newest_window_asks_any_word_only_of_the_kinds_that_hold_none_together(
    store, monkeypatch
):
    monkeypatch.setattr(lexical, "RARE_DOCUMENTS", 1)
    monkeypatch.setattr(lexical, "RARE_SHARE", 0.0)
    monkeypatch.setattr(lexical, "COMMON_WINDOW", 12)
    asks = []
    per_kind = store.lexical_search_per_kind

    def counted(query, **asked):
        asks.append((query.all_of, bool(query.alternatives), sorted(asked["limits"])))
        return per_kind(query, **asked)

    monkeypatch.setattr(store, "lexical_search_per_kind", counted)
    candidates = Searcher(store, weights=RELEVANCE_ONLY).lexical
    pools = {"fragment": 5, "summary": 5, "observation": 5}
    found = candidates.per_kind(parse("pool timeout"), Scope(list(pools), "demo", False), pools)
    # The events hold both words; the summaries one; the fragments are older than the window.
    # Then the other language's words, of every kind.
    assert asks == [
        (True, False, ["fragment", "observation", "summary"]),
        (False, False, ["fragment", "summary"]),
        (False, True, ["fragment", "observation", "summary"]),
    ]
    assert found["observation"] and found["summary"] and not found["fragment"]
