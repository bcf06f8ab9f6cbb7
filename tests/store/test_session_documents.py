"""A host session's documents, read by their session on every engine: what a context
request leaves out when it weighs its words."""

from __future__ import annotations

import dataclasses

from tests.store.test_across_languages import _draft


def test_a_sessions_documents_of_the_kinds_asked_newest_first(open_store):
    store = open_store()
    for session in ("s1", "s2"):
        store.ensure_session(session, project="demo", cwd="/src/demo")
    drafts = [
        _draft("first", "the pool leaks"),
        _draft("second", "release it in finally"),
        dataclasses.replace(_draft("other", "bump the lockfile"), session_id="s2"),
        dataclasses.replace(_draft("s1", "the pool leaks"), kind="session"),
        dataclasses.replace(_draft("rule", "release in finally"), kind="fragment", session_id=None),
    ]
    store.write_documents(drafts)
    store.sync()
    found = store.session_documents("s1", kinds=("observation", "session"), limit=10)
    assert [(d.kind, d.key) for d in found] == [
        ("session", "s1"),
        ("observation", "second"),
        ("observation", "first"),
    ]
    newest = store.session_documents("s1", kinds=("observation",), limit=1)
    assert [d.key for d in newest] == ["second"]
    assert store.session_documents("nobody", kinds=("observation",), limit=10) == []
