"""Dedup with the packaged local embedder loaded: the same table of pairs as
``test_dedup``, through ``Memory.remember``, where the semantic score counts too."""

from __future__ import annotations

import pytest

from memvault import Memory
from memvault.vault.remember import Draft
from tests.vault.test_dedup import APART, MERGE


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    home = tmp_path_factory.mktemp("dedup-semantic") / "home"
    with Memory.open(home=home, embeddings="local") as opened:
        opened.index.semantic.warm()
        yield opened


def save_pair(memory, project, pair):
    (first, first_facts), (second, second_facts) = pair
    written = memory.remember(Draft(project=project, summary=first, facts=first_facts))
    again = memory.remember(Draft(project=project, summary=second, facts=second_facts))
    return written, again


@pytest.mark.parametrize("name", MERGE)
def test_near_identical_fragments_merge_with_an_embedder(memory, name):
    written, again = save_pair(memory, f"merge {name}", MERGE[name])
    assert again.action == "merged" and again.path == written.path


@pytest.mark.parametrize("name", APART)
def test_fragments_that_disagree_stay_apart_with_an_embedder(memory, name):
    written, again = save_pair(memory, f"apart {name}", APART[name])
    assert again.action == "created" and again.path != written.path
