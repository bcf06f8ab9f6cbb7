"""A memory block is one search: the request parsed once, one lexical retrieval in each
part of the index for every kind of memory the block holds there (sessions are weighed
among sessions, the rest among the rest; and one of the other language's words for the
request's, from the lexicon, for the same kinds), each kind cut to its own quota."""

from __future__ import annotations

import pytest

from memvault.domain import utc_now
from memvault.memory import context as context_part
from memvault.search import engine
from memvault.search.query import parse
from tests.context.conftest import start
from tests.helpers import envelope

NOW = utc_now()
REQUEST = "why does the refresh token rotation fail"


@pytest.fixture
def counted(auth_memory, monkeypatch):
    """The memory, with its store's lexical searches and the parses of the request
    counted (the real store and parser do the work)."""
    calls = {"lexical": [], "alternatives": [], "parsed": 0}
    lexical_search = auth_memory.store.lexical_search

    def lexical(query, **asked):
        calls["alternatives" if query.alternatives else "lexical"].append(asked["kinds"])
        return lexical_search(query, **asked)

    def parsing(text):
        calls["parsed"] += text == REQUEST
        return parse(text)

    start(auth_memory, "other")
    auth_memory.observe(envelope("other", 1, hookType="prompt_submit", data={"prompt": REQUEST}))
    auth_memory.index.index_now()
    monkeypatch.setattr(auth_memory.store, "lexical_search", lexical)
    monkeypatch.setattr(engine, "parse", parsing)
    monkeypatch.setattr(context_part, "parse", parsing)
    return auth_memory, calls


def test_a_context_request_searches_once(counted):
    memory, calls = counted
    packed = memory.context.context(project="demo-app", query=REQUEST)
    assert [b for b in packed.blocks if b["kind"] == "fragment"]
    assert [b for b in packed.blocks if b["kind"] == "observation"]
    assert sorted(sorted(kinds) for kinds in calls["lexical"]) == [
        ["fragment", "observation", "summary"],
        ["session"],
    ]
    # "refresh token" and "fail" have Chinese words in the lexicon: asked once, for every kind.
    assert calls["alternatives"] == calls["lexical"]
    assert calls["parsed"] == 1


def test_an_enrich_request_searches_once(counted):
    memory, calls = counted
    memory.context.enrich(files=["src/auth/refresh.py"], terms=["token"], project="demo-app")
    assert len(calls["lexical"]) == 1
    assert sorted(calls["lexical"][0]) == ["fragment", "observation"]
    assert calls["alternatives"] == calls["lexical"]


def test_each_kind_is_ranked_as_a_search_of_it_alone_ranks_it(counted):
    memory, _ = counted
    found = memory.index.searcher.find(
        REQUEST, context_part.CONTEXT_QUOTAS, project="demo-app", now=NOW
    )
    for kind, quota in context_part.CONTEXT_QUOTAS.items():
        alone = memory.index.searcher.search(
            REQUEST, limit=quota, project="demo-app", kinds=[kind], now=NOW
        )
        assert [(h.document.key, h.score) for h in found[kind]] == [
            (h.document.key, h.score) for h in alone
        ]
    assert found["fragment"] and found["observation"]
