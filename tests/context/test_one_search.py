"""A memory block is one search: the request parsed once, the words it asks chosen once
for each part of the index (sessions are weighed among sessions, the rest among the rest),
and one lexical retrieval for each part, for all the kinds of memory the block holds in it
(and one of the other language's words for the request's, from the lexicon, for the same
kinds), each kind its own candidates and cut to its own quota."""

from __future__ import annotations

import pytest

from memvault.domain import utc_now
from memvault.memory import context as context_part
from memvault.search import engine
from memvault.search import query as query_part
from memvault.search.query import parse
from memvault.vault.remember import Draft
from tests.context.conftest import start
from tests.helpers import envelope

NOW = utc_now()
REQUEST = "why does the refresh token rotation fail"


@pytest.fixture
def counted(auth_memory, monkeypatch):
    """The memory, with its store's lexical searches (the kinds each asks) and the
    parses of the request counted (the real store and parser do the work)."""
    calls = {"lexical": [], "alternatives": [], "named": [], "parsed": 0}
    store = auth_memory.store
    lexical_search, per_kind = store.lexical_search, store.lexical_search_per_kind

    def record(query, kinds):
        if query.fields == ("context",):  # what the request names, asked of what sessions touched
            calls["named"].append(list(kinds))
        else:
            calls["alternatives" if query.alternatives else "lexical"].append(list(kinds))

    def lexical(query, **asked):
        record(query, asked["kinds"])
        return lexical_search(query, **asked)

    def lexical_per_kind(query, **asked):
        record(query, asked["limits"])
        return per_kind(query, **asked)

    def parsing(text, **options):
        calls["parsed"] += text == REQUEST
        return parse(text, **options)

    start(auth_memory, "other")
    auth_memory.observe(envelope("other", 1, hookType="prompt_submit", data={"prompt": REQUEST}))
    auth_memory.index.index_now()
    monkeypatch.setattr(store, "lexical_search", lexical)
    monkeypatch.setattr(store, "lexical_search_per_kind", lexical_per_kind)
    monkeypatch.setattr(engine, "parse", parsing)
    monkeypatch.setattr(context_part, "parse", parsing)
    return auth_memory, calls


def test_a_context_request_searches_once(counted):
    memory, calls = counted
    packed = memory.context.context(project="demo-app", query=REQUEST)
    assert [b for b in packed.blocks if b["kind"] == "fragment"]
    assert [b for b in packed.blocks if b["kind"] == "observation"]
    # One ask of each part: the sessions, and the rest's kinds together.
    assert sorted(calls["lexical"]) == [["fragment", "summary", "observation"], ["session"]]
    # "refresh token" and "fail" have Chinese words in the lexicon: asked once, for every kind.
    assert calls["alternatives"] == calls["lexical"]
    assert calls["named"] == []  # it names no code
    assert calls["parsed"] == 1


def test_a_request_naming_code_asks_the_sessions_once_more_for_what_it_names(counted):
    memory, calls = counted
    memory.context.context(project="demo-app", query=REQUEST + " in tests/test_refresh.py")
    # The file's words are in no session and the others in the only one (as common as a
    # word can be among sessions): the sessions are asked all the words, in their newest
    # documents, together and then any of them, as when every word is common.
    assert sorted(calls["lexical"]) == [
        ["fragment", "summary", "observation"],
        ["session"],
        ["session"],
    ]
    assert calls["named"] == [["session"]]


def test_an_enrich_request_searches_once(counted):
    memory, calls = counted
    memory.context.enrich(files=["src/auth/refresh.py"], terms=["token"], project="demo-app")
    assert calls["lexical"] == [["fragment", "observation"]]
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


def test_a_long_requests_many_events_do_not_crowd_the_fragments_out(memory):
    """A pasted log's words are in many events, each holding more of them than a fragment
    does; the fragment that names the library the log loads is still a candidate, as a
    search of fragments alone finds it."""
    memory.remember(
        Draft(
            project="demo-app",
            summary="Use the CommandLineParser library for the command line",
            facts=["decision: CommandLineParser parses the arguments"],
        )
    )
    log = "csc warning nullable reference commandlineparser assembly build failed"
    memory.observe_many(
        [
            envelope("old", n, data={"tool_name": "Bash", "tool_output": f"{log} {n}"})
            for n in range(450)  # more than every kind's candidates together
        ]
    )
    memory.index.index_now()
    found = memory.index.searcher.find(log, context_part.CONTEXT_QUOTAS, project="demo-app")
    alone = memory.index.searcher.search(log, project="demo-app", kinds=["fragment"])
    assert [h.document.summary for h in alone] == [
        "Use the CommandLineParser library for the command line"
    ]
    assert [h.document.key for h in found["fragment"]] == [h.document.key for h in alone]
    assert len(found["observation"]) == context_part.CONTEXT_QUOTAS["observation"]


def test_a_long_request_is_tokenized_once_whatever_it_is_asked_of(counted, monkeypatch):
    """The words a long request says most are counted when it is parsed, not again for
    each part and kind its words are chosen for."""
    memory, _ = counted
    log = " ".join(f"refresh{n} token rotation fails" for n in range(40))
    said = []
    real = query_part.tokens
    monkeypatch.setattr(query_part, "tokens", lambda text: said.append(text) or real(text))
    memory.index.searcher.find(log, context_part.CONTEXT_QUOTAS, project="demo-app")
    assert said == [log]  # when it was parsed, and not again for any part or kind
