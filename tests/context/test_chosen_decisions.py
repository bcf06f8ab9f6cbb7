"""A decision is also about what it chooses in plain words: the user said "use a mock
filesystem for tests" or ``USE "uv pip"!``, and a later request that names the thing chosen,
in a pasted log among hundreds of other words, gets the decision's line. A plain word that
most sessions say ("use the cache") names nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memvault import Memory
from memvault.domain import Document
from memvault.memory import telling
from memvault.memory.telling import decisions_named, in_force, named_among
from tests.context.turns import Turns, remembered

PROJECT = "search-cli"
MOCKS = "use a mock filesystem for tests so we can run them in parallel."
INSTALLER = 'USE "uv pip"! never plain pip.'

# A failing install and test run pasted whole: its words are in every session that ran
# the tests; "uv pip" is one phrase among them.
PASTED = "\n".join(
    [
        "uv pip install -e .[dev,test] && python -m pytest -x tests/engines",
        "Resolved 84 packages in 1.21s",
        "Prepared 3 packages in 402ms",
        "Installed 3 packages in 11ms",
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.3.4, pluggy-1.5.0",
        "collected 212 items",
        "tests/engines/test_brave.py ........F",
        "FAILED tests/engines/test_brave.py::test_search_news - KeyError: 'results'",
        "E   KeyError: 'results'",
        "../site/engines/brave.py:88: in search_news",
        "    return [self.convert(item) for item in data['results']]",
        "=========================== short test summary info ============================",
        "1 failed, 211 passed in 9.84s",
    ]
)


TURNS = Turns(PROJECT, "/src/search-cli")
said = TURNS.said


def sessions() -> dict[str, list[dict]]:
    """Two sessions that chose, and two that ran the tests."""
    return {
        "mocks": said(
            "mocks",
            MOCKS,
            "The tests now build their own in-memory file system each.",
            "/src/search-cli/tests/conftest.py",
        ),
        "deps": said(
            "deps",
            INSTALLER,
            "Switched the README's install steps and the CI job to uv.",
            "/src/search-cli/README.md",
        ),
        "news": said(
            "news",
            "add a news search to the brave engine and run the tests",
            "Added search_news to the brave engine; 211 tests pass after pytest -x.",
            "/src/search-cli/site/engines/brave.py",
        ),
        "ranks": said(
            "ranks",
            "rank the results of every engine by date, then run the tests",
            "The engines sort their results by date; the tests pass after pytest.",
            "/src/search-cli/site/ranking.py",
        ),
    }


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home") as opened:
        remembered(opened, sessions())
        yield opened


def test_a_pasted_log_naming_the_installer_a_decision_chose_gets_the_decision(memory):
    packed = memory.context.context(project=PROJECT, query=PASTED)
    (decision,) = [b for b in packed.blocks if b["kind"] == "fragment" and "uv pip" in b["text"]]
    assert "decision" in decision["text"]


def test_the_floor_alone_does_not_give_it(memory, monkeypatch):
    """What the named decisions are for: the same block, read by the floor alone."""
    monkeypatch.setattr(telling, "DECISIONS_TOLD", 0)
    assert "uv pip" not in memory.context.context(project=PROJECT, query=PASTED).text


def test_a_request_naming_the_thing_chosen_in_plain_words_gets_the_decision(memory):
    asked = "each test needs its own instance of the mock filesystem, they still share one"
    packed = memory.context.context(project=PROJECT, query=asked)
    assert "mock filesystem for tests" in packed.text


def test_a_request_naming_only_a_word_of_the_choice_gets_no_decision_by_it(memory):
    log = PASTED.replace("uv pip install", "pip install")
    assert "uv pip" not in memory.context.context(project=PROJECT, query=log).text


def test_sessions_tell_which_plain_words_are_too_common_to_name_anything(memory):
    common = memory.index.searcher.lexical.common_among_sessions
    assert common("tests")  # every session ran them
    assert common("other")  # a stop word tells nothing apart
    assert not common("mock")
    assert not common("uv pip")


def test_on_postgresql_too(tmp_path, monkeypatch, postgres_cluster):
    """The same reading on the shared store: the decision told, the words counted."""
    monkeypatch.setenv("MEMVAULT_STORE_URL", postgres_cluster.database())
    with Memory.open(home=tmp_path / "home") as opened:
        remembered(opened, sessions())
        packed = opened.context.context(project=PROJECT, query=PASTED)
        assert [b for b in packed.blocks if b["kind"] == "fragment" and "uv pip" in b["text"]]
        common = opened.index.searcher.lexical.common_among_sessions
        assert common("tests") and not common("mock")


# -- what a decision is about ---------------------------------------------------------------


def fragment(n: int, summary: str, updated: str = "2026-11-20T10:00:00.000Z") -> Document:
    meta = {"tags": ["agent-memory", "decision"], "confidence": 0.9, "source": "session s1"}
    return Document(
        n, "fragment", f"fragments/f{n}.md", PROJECT, None, f"f{n}", summary,
        f"- decision: {summary}", 0.8, updated, None, [], False, meta, 0, None,
    )  # fmt: skip


def test_a_decision_is_about_what_it_chooses_besides_its_code_names():
    decisions = in_force([fragment(1, "let's switch to pnpm for the workspace")], PROJECT)
    assert [about for _, about in decisions] == [("pnpm",)]
    (code,) = in_force([fragment(2, "Use 'Path.GetRandomFileName()' instead.")], PROJECT)
    assert code[1] == ("Path.GetRandomFileName", "GetRandomFileName")  # told once, as code


def test_a_plain_word_chosen_names_nothing_where_it_is_common():
    cache = fragment(1, "use the cache for every lookup")
    pnpm = fragment(2, "let's switch to pnpm for the workspace")
    queue = fragment(3, "can we use a work queue for the hashing?")
    request = "the cache misses after pnpm install, and the work queue stalls"
    decisions = in_force([cache, pnpm, queue], PROJECT)
    assert named_among(request, decisions[:1]) == [cache]
    told = named_among(request, decisions, common={"cache"}.__contains__)
    assert sorted(d.id for d in told) == [2, 3]
    # Only a plain word is weighed so, never a phrase.
    assert named_among(request, decisions, common=lambda name: True) == [queue]


def test_a_phrase_chosen_is_named_whole():
    mocks = fragment(1, MOCKS)
    assert decisions_named("we mock the filesystem calls", [mocks]) == []
    assert decisions_named("give every test its own mock filesystem", [mocks]) == [mocks]
    newer = replace(fragment(2, MOCKS), updated_at="2026-11-21T10:00:00.000Z")
    assert decisions_named("the mock filesystem leaks", [mocks, newer])[0] == newer
