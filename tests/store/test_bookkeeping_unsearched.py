"""Upgrading a store whose bookkeeping (notifications, session starts, memvault's records
of what it gave, the host's own tools) was indexed with its words and vectors: on every
engine those documents keep their place among the session's documents and lose their
words and vectors in place, the index's lengths and totals stay as a fresh write of the
same documents makes them, and each bookkeeping observation is logged as changed, so the
index re-reads its neighbours (which held its words as context)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from memvault.analyzer import tokens
from memvault.ingest import prepare
from memvault.ingest.envelope import NO_WORK_HOOKS, Envelope, validate
from memvault.search.documents import unsearched
from memvault.store import LexicalQuery, migrations
from memvault.store.postgres.append import OBSERVATION_CHANGES_LOCK
from tests.helpers import envelope, observation_scores
from tests.store.test_across_languages import _draft

QUERY = LexicalQuery(terms=tuple(tokens("permission to use Bash")))
NOTICE = "Claude needs your permission to use Bash"


def kept(key: str, text: str, **meta: str):
    return dataclasses.replace(_draft(key, text), meta=meta)


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
    return observation_scores(store, QUERY)


def test_bookkeeping_indexed_before_loses_its_words(open_store, monkeypatch):
    load = migrations.load
    others = [_draft(f"other-{i}", f"ran the linter on module {i}") for i in range(20)]
    with monkeypatch.context() as before:
        before.setattr(migrations, "load", lambda e: [m for m in load(e) if m.version < 19])
        old = open_store()
        old.ensure_session("s1", project="demo", cwd="/src/demo")
        logged = old.append_events([event(0, "notification"), event(1, "prompt_submit")])
        old.write_documents([*BOOKKEEPING, *WORK, *others])
        embedded = old.documents_to_embed(0, limit=100)
        old.write_vectors("m", [(i, rev, bytes(8)) for i, rev, _ in embedded], cursor=("v", 1))
        old.sync()
        assert set(found(old)) == {"notice", "given", "started", "ask", "about"}
        assert len(old.vectors("m")) == 25
        old.close()
    store = open_store()
    upgraded = found(store)
    assert set(upgraded) == {"ask", "about"}
    assert store.document_count() == 25  # kept, each of them
    assert len(store.vectors("m")) == 22  # the bookkeeping's are gone
    to_embed = store.documents([i for i, _, _ in store.documents_to_embed(0, limit=100)])
    assert len(to_embed) == 22
    assert not {doc.key for doc in to_embed.values()} & {draft.key for draft in BOOKKEEPING}
    # The notice is logged as changed: the index reads it again with its neighbours.
    assert [seq for _, seq in store.observation_changes(0, limit=10)] == [logged[0].event_seq]
    # Written again as the indexer now writes them: the same lengths and totals, so the
    # same scores.
    store.write_documents([unsearched(draft) for draft in BOOKKEEPING])
    store.sync()
    assert found(store) == pytest.approx(upgraded, rel=1e-9)
    assert store.document_count() == 25


def event(n: int, hook: str):
    return prepare(validate(Envelope, envelope("s1", n, hookType=hook, data={"message": NOTICE})))


# The hooks migration 0019 empties, as written when it was: a migration is never edited.
HOOKS_0019 = {
    "session_start",
    "session_end",
    "notification",
    "pre_compact",
    "post_compact",
    "context_injected",
}


def test_the_upgrade_names_the_hooks_the_indexer_leaves_wordless():
    """Migration 0019 spells the hooks in SQL twice, for the documents and for the change
    log; whatever ``NO_WORK_HOOKS`` names, some migration upgraded (a hook added
    later needs a migration of its own for the stores before it)."""
    covered: dict[str, set[str]] = {}
    for engine in ("sqlite", "postgres"):
        scripts = {m.version: m.sql for m in migrations.load(engine) if m.version >= 19}
        listed = [
            set(re.findall(r"'([a-z_]+)'", found))
            for found in re.findall(r"IN \(\s*('[^)]*)\)", scripts[19])
        ]
        assert listed == [HOOKS_0019, HOOKS_0019], engine
        assert scripts[19].count("'host_internal'") == 2, engine
        covered[engine] = set().union(
            *(re.findall(r"'([a-z_]+)'", sql) for sql in scripts.values())
        )
        assert covered[engine] >= NO_WORK_HOOKS, engine


def test_the_upgrade_takes_the_change_logs_lock():
    """PostgreSQL's 0019 draws change-log ids under the lock the store draws them under."""
    (script,) = [m.sql for m in migrations.load("postgres") if m.version == 19]
    assert f"pg_advisory_xact_lock({OBSERVATION_CHANGES_LOCK})" in script
