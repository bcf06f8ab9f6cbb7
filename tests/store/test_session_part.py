"""The lexical index's two parts, on every engine: a session's document is weighed among
sessions (their count, lengths and words), whatever else the index holds, as a plain BM25
over whole sessions weighs it; everything else among the rest."""

from __future__ import annotations

import dataclasses

import pytest

from memvault.search.documents import terms
from memvault.search.engine import Searcher
from memvault.search.ranking import RELEVANCE_ONLY
from memvault.store import LexicalQuery, migrations
from memvault.store.contract import REST_PART, SESSION_PART
from tests.store.test_across_languages import _draft

SESSIONS = {
    # A long session that keeps coming back to the pool, and a short one that names it once.
    "long": "the pgpool connection pool leaks under load " * 40 + "release it in finally " * 40,
    "short": "bump the lockfile and mention pgpool once",
    "other": "rename the settings page and its tests",
    **{f"chore-{i}": f"tidy module {i} and rerun its tests before the release" for i in range(9)},
}
QUERY = LexicalQuery(terms=("pgpool", "leaks"))


def session_draft(key: str, text: str):
    draft = _draft(key, text)
    return dataclasses.replace(
        draft, kind="session", terms=(terms(text[:30]), terms(text), "", draft.terms[3])
    )


def crowd(n: int) -> list:
    """Short observations, most about something else, a few naming the pool."""
    return [
        _draft(f"event-{i}", "pgpool restarted" if i % 10 == 0 else f"ran the linter on file {i}")
        for i in range(n)
    ]


def session_scores(store) -> dict[str, float]:
    found = store.lexical_search(QUERY, kinds=["session"], project="demo")
    ids = {doc_id: doc.key for doc_id, doc in store.documents([i for i, _ in found]).items()}
    return {ids[doc_id]: score for doc_id, score in found}


# Where the engines ask which part a kind is in.
MODULES = (
    "memvault.store.contract.index",
    "memvault.store.sqlite.fts5",
    "memvault.store.postgres.bm25",
    "memvault.store.postgres.documents",
)


def old_store(open_store):
    store = open_store()
    store.ensure_session("s1", project="demo", cwd="/src/demo")
    store.write_documents([session_draft(key, text) for key, text in SESSIONS.items()] + crowd(200))
    store.sync()
    return store


def test_a_sessions_score_does_not_move_with_the_events_beside_it(open_store):
    store = open_store()
    store.ensure_session("s1", project="demo", cwd="/src/demo")
    store.write_documents([session_draft(key, text) for key, text in SESSIONS.items()])
    store.sync()
    alone = session_scores(store)
    assert set(alone) == {"long", "short"}
    store.write_documents(crowd(200))
    store.sync()
    # Two hundred short events beside them change neither the sessions' lengths against
    # their average nor how rare the words are among sessions.
    assert session_scores(store) == pytest.approx(alone, rel=1e-9)
    # The long session that says it forty times is not sunk by its length.
    assert alone["long"] > alone["short"]
    # Both parts answer a search of both kinds, and both are counted.
    both = store.lexical_search(QUERY, kinds=["session", "observation"], project="demo")
    kinds = {doc.kind for doc in store.documents([i for i, _ in both]).values()}
    assert kinds == {"session", "observation"}
    assert store.document_count() == 212
    assert store.term_counts(["pgpool"], cap=1000) == {"pgpool": 2 + 20}
    # Counted part after part as far as the cap: a cap one part reaches, one both do.
    assert store.term_counts(["pgpool", "linter"], cap=1) == {"pgpool": 2, "linter": 2}
    assert store.term_counts(["pgpool", "PgPool", "absent"], cap=20) == {
        "pgpool": 21,
        "PgPool": 21,
        "absent": 0,
    }
    # Each part counted alone: what a search weighs a part's words by.
    assert store.document_count([SESSION_PART]) == 12
    assert store.document_count([REST_PART]) == 200
    assert store.term_counts(["pgpool", "linter"], cap=1000, parts=[SESSION_PART]) == {
        "pgpool": 2,
        "linter": 0,
    }
    assert store.term_counts(["pgpool"], cap=5, parts=[REST_PART]) == {"pgpool": 6}  # cap + 1


def test_session_documents_indexed_before_the_parts_are_weighed_as_new_ones(
    open_store, monkeypatch
):
    """A store made before the index had its session part is moved into it as it opens."""
    load = migrations.load
    monkeypatch.setattr(
        migrations, "load", lambda engine: [m for m in load(engine) if m.version < 16]
    )
    # As before the parts: every document in the one index.
    with monkeypatch.context() as before_parts:
        for module in MODULES:
            before_parts.setattr(f"{module}.part_of", lambda kind: REST_PART, raising=False)
            before_parts.setattr(f"{module}.LEXICAL_PARTS", (REST_PART,), raising=False)
        old = old_store(open_store)
        before = session_scores(old)
        old.close()
    monkeypatch.setattr(migrations, "load", load)
    store = open_store()
    after = session_scores(store)
    assert set(after) == {"long", "short"}
    assert after != pytest.approx(before, rel=1e-3)  # weighed among sessions now
    assert after["long"] > after["short"]
    assert store.document_count() == 212
    assert store.term_counts(["pgpool"], cap=1000) == {"pgpool": 2 + 20}
    # Its totals moved with it: more events beside the sessions leave their scores alone.
    store.write_documents([dataclasses.replace(d, key=f"later-{d.key}") for d in crowd(100)])
    store.sync()
    assert session_scores(store) == pytest.approx(after, rel=1e-9)
    assert store.document_count() == 312


def test_sessions_keep_their_place_in_a_search_with_the_other_languages_words(open_store):
    """Each part's candidates are cut among their own: a request with alternatives (its
    words in the other language) once cut both parts together by raw BM25, and sessions,
    scored on another scale, fell out of the candidates behind a hundred events."""
    store = open_store()
    store.ensure_session("s1", project="demo", cwd="/src/demo")
    sessions = {
        **{f"slow-{i}": f"the database timeout on checkout, take {i}" for i in range(3)},
        **{f"chore-{i}": f"tidy module {i} and rerun its tests" for i in range(5)},
    }
    events = [
        _draft(
            f"event-{i}",
            "database timeout" + " retried" * (i % 40 + 1) if i < 150 else f"ran the linter on {i}",
        )
        for i in range(1200)
    ]
    store.write_documents([session_draft(k, t) for k, t in sessions.items()] + events)
    store.sync()
    searcher = Searcher(store, weights=RELEVANCE_ONLY)
    assert searcher._parsed("database timeout", wait=0).alternatives  # 数据库, 超时
    hits = searcher.search("database timeout", project="demo", limit=30)
    found = {hit.document.key for hit in hits if hit.document.kind == "session"}
    assert found == {"slow-0", "slow-1", "slow-2"}
    assert max(hit.lexical for hit in hits if hit.document.kind == "session") == 1.0


def test_a_session_holding_only_words_every_session_says_is_not_a_best_match(open_store):
    """With one session, every word of it is in half the sessions or more, and BM25 says
    nothing of it (its idf is floored): it is not the best of its own scale but weighed
    with the rest, as in one index."""
    store = open_store()
    store.ensure_session("s1", project="demo", cwd="/src/demo")
    store.write_documents(
        [session_draft("only", "moved the checkout button")]
        + [_draft("flaky", "the flaky button test in checkout")]
        + [_draft(f"event-{i}", f"ran the linter on file {i}") for i in range(200)]
    )
    store.sync()
    hits = Searcher(store, weights=RELEVANCE_ONLY).search("flaky button", project="demo")
    lexical = {hit.document.key: hit.lexical for hit in hits}
    assert lexical["flaky"] == 1.0
    assert lexical.get("only", 0.0) < 0.01
