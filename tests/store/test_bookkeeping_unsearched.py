"""Upgrading a store whose bookkeeping (notifications, session starts, memvault's records
of what it gave, the host's own tools) was indexed with its words: on every engine those
documents keep their place among the session's documents and lose their words in place,
and the index's lengths and totals stay as a fresh write of the same documents makes
them."""

from __future__ import annotations

import dataclasses

import pytest

from memvault.analyzer import tokens
from memvault.search.documents import unsearched
from memvault.store import LexicalQuery, migrations
from tests.store.test_across_languages import _draft

QUERY = LexicalQuery(terms=tuple(tokens("permission to use Bash")))
NOTICE = "Claude needs your permission to use Bash"


def kept(key: str, text: str, **meta: str):
    return dataclasses.replace(_draft(key, text), meta=meta, embed_text="")


BOOKKEEPING = [
    kept("notice", NOTICE, type="notification", hookType="notification"),
    kept("given", "Memory given: permission to use Bash", type="host_internal", hookType="x"),
    kept("started", "Session started: use Bash", type="session", hookType="session_start"),
]
WORK = [
    kept("ask", "ask before any Bash command that needs permission", hookType="prompt_submit"),
    kept("about", "about to run Bash", hookType="pre_tool_use"),
]


def found(store) -> dict[str, float]:
    hits = store.lexical_search(QUERY, kinds=["observation"], project="demo")
    keys = {doc_id: doc.key for doc_id, doc in store.documents([i for i, _ in hits]).items()}
    return {keys[doc_id]: score for doc_id, score in hits}


def test_bookkeeping_indexed_before_loses_its_words(open_store, monkeypatch):
    load = migrations.load
    others = [_draft(f"other-{i}", f"ran the linter on module {i}") for i in range(20)]
    with monkeypatch.context() as before:
        before.setattr(migrations, "load", lambda e: [m for m in load(e) if m.version < 19])
        old = open_store()
        old.ensure_session("s1", project="demo", cwd="/src/demo")
        old.write_documents([*BOOKKEEPING, *WORK, *others])
        old.sync()
        assert set(found(old)) == {"notice", "given", "started", "ask", "about"}
        old.close()
    store = open_store()
    upgraded = found(store)
    assert set(upgraded) == {"ask", "about"}
    assert store.document_count() == 25  # kept, each of them
    # Written again as the indexer now writes them: the same lengths and totals, so the
    # same scores.
    store.write_documents([unsearched(draft) for draft in BOOKKEEPING])
    store.sync()
    assert found(store) == pytest.approx(upgraded, rel=1e-9)
    assert store.document_count() == 25
