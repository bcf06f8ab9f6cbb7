"""Upgrading a store whose turn ends (observations that say nothing of their own) were
indexed with their neighbours' words: on every engine they lose those words in place, and
the index's lengths and totals stay as a fresh write of the same documents makes them."""

from __future__ import annotations

import dataclasses

import pytest

from memvault.analyzer import tokens
from memvault.search.documents import terms
from memvault.store import LexicalQuery, migrations
from tests.helpers import observation_scores
from tests.store.test_across_languages import _draft

REPLY = "The proxy idles out after 60 s."
QUERY = LexicalQuery(terms=tuple(tokens("proxy idles")))


def turn_end(context: str):
    draft = _draft("turn-end", "Turn ended")
    return dataclasses.replace(
        draft,
        terms=(*draft.terms[:2], terms(context), draft.terms[3]),
        content_hash=f"turn ended beside {context!r}",
    )


def found(store) -> dict[str, float]:
    return observation_scores(store, QUERY)


def test_turn_ends_indexed_before_lose_their_neighbours_words(open_store, monkeypatch):
    load = migrations.load
    with monkeypatch.context() as before:
        before.setattr(migrations, "load", lambda e: [m for m in load(e) if m.version < 17])
        old = open_store()
        old.ensure_session("s1", project="demo", cwd="/src/demo")
        others = [_draft(f"other-{i}", f"ran the linter on module {i}") for i in range(20)]
        old.write_documents([_draft("reply", REPLY), turn_end(REPLY), *others])
        old.sync()
        assert set(found(old)) == {"reply", "turn-end"}
        old.close()
    store = open_store()
    upgraded = found(store)
    assert set(upgraded) == {"reply"}
    # Written again as the indexer now writes it: the same lengths and totals, so the
    # same score.
    store.write_documents([turn_end("")])
    store.sync()
    assert found(store) == pytest.approx(upgraded, rel=1e-9)
    assert store.document_count() == 22
