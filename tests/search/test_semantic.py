"""Semantic search for real: the packaged all-MiniLM-L6-v2 model, vectors in the store."""

from __future__ import annotations

import pytest

from memvault import Memory
from memvault.domain import utc_now
from memvault.vault.remember import Draft

NOW = utc_now()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("semantic") / "home"


@pytest.fixture(scope="module")
def memory(home):
    with Memory.open(home=home, embeddings="local") as opened:
        opened.index.semantic.warm()
        yield opened


def observe(memory, n, text):
    memory.observe(
        {
            "hookType": "prompt_submit",
            "sessionId": f"sem-{n}",
            "project": "demo",
            "cwd": "/c",
            "timestamp": "2026-11-30T10:00:00Z",
            "eventId": f"sem-{n}",
            "data": {"prompt": text},
        }
    )


def observed(memory) -> None:
    """The two events these tests search, whichever runs first (a worker may take one test
    of the module without the other: the ids make a second observe a duplicate)."""
    observe(memory, 1, "The automobile would not start this morning")
    observe(memory, 2, "Refactor the billing module into smaller files")
    memory.index.index_now()


def test_a_paraphrase_with_no_shared_word_is_found(memory):
    observed(memory)
    hits = memory.search("car engine trouble", kinds=["observation"])
    assert hits[0].document.event_ids == ["sem-1"]
    assert hits[0].semantic is not None and hits[0].lexical is None


def test_vectors_are_kept_in_the_store_and_loaded_on_reopen(memory, home):
    observed(memory)
    count = len(memory.store.vectors(memory.index.semantic.model))
    assert count >= 2
    with Memory.open(home=home, embeddings="local") as reopened:
        reopened.index.semantic.warm()
        assert reopened.index.index_now() == 0  # nothing to embed again
        hits = reopened.search("vehicle breakdown", kinds=["observation"])
        assert hits and hits[0].document.event_ids == ["sem-1"]


def test_dedup_is_semantic_when_vectors_exist(memory):
    first = memory.remember(
        Draft(project="sem", summary="The database runs out of connections", facts=["pool: 5"])
    )
    again = memory.remember(
        Draft(
            project="sem",
            summary="Database connection pool gets exhausted",
            facts=["pool: 5"],
        ),
        threshold=0.7,
    )
    assert again.action == "merged" and again.path == first.path
    unrelated = memory.remember(
        Draft(project="sem", summary="Logo colours are blue and white", facts=["brand: blue"]),
        threshold=0.7,
    )
    assert unrelated.action == "created"


def test_a_search_before_the_model_has_loaded_does_not_wait_for_it(home, tmp_path):
    with Memory.open(home=tmp_path / "cold", embeddings="local") as cold:
        observe(cold, 1, "flaky websocket reconnect")
        hits = cold.search("websocket")
        assert hits and hits[0].semantic is None  # lexical now, semantic once loaded


def test_one_search_for_several_kinds_ranks_each_as_its_own_search_would(memory):
    observe(memory, 10, "The car's engine stalls when it is cold outside")
    memory.remember(
        Draft(
            project="demo",
            summary="A cold engine stalls until the choke is set",
            facts=["choke: half open below 5°C"],
            description="cold start",
        )
    )
    memory.index.index_now()
    text = "vehicle will not start in winter"
    quotas = {"fragment": 3, "observation": 4}
    found = memory.index.searcher.find(text, quotas, project="demo", now=NOW)
    assert found.query.text == text
    for kind, quota in quotas.items():
        alone = memory.index.searcher.search(
            text, limit=quota, project="demo", kinds=[kind], now=NOW
        )
        assert [(h.document.key, h.score) for h in found[kind]] == [
            (h.document.key, h.score) for h in alone
        ]
        assert found[kind]
