"""A kind's stamp in a project, on every engine: it moves whenever one of the project's
documents of that kind is written again or deleted, and with nothing else, so a copy read
with it is known current while it holds."""

from __future__ import annotations

import dataclasses

from tests.store.test_across_languages import _draft


def fragment(key: str, text: str, project: str = "demo"):
    return dataclasses.replace(_draft(key, text), kind="fragment", project=project)


def test_a_kinds_stamp_moves_with_its_documents_and_nothing_else(open_store):
    store = open_store()
    assert store.kind_stamp("fragment", "demo") == (0, 0, 0, 0)
    store.write_documents([fragment("a", "use the pool"), fragment("b", "retry on timeout")], [])
    store.sync()
    first = store.kind_stamp("fragment", "demo")
    assert first[0] == 2

    # Another kind, another project: the stamp holds.
    store.write_documents([_draft("e", "ran the tests"), fragment("c", "x", project="other")], [])
    store.sync()
    assert store.kind_stamp("fragment", "demo") == first

    # One written again with new text, one deleted: it moves each time.
    store.write_documents([fragment("a", "use the pool, sized to the cores")], [])
    store.sync()
    rewritten = store.kind_stamp("fragment", "demo")
    assert rewritten[0] == 2 and rewritten != first
    store.write_documents([], [("fragment", "b")])
    store.sync()
    assert store.kind_stamp("fragment", "demo")[0] == 1
    assert store.kind_stamp("fragment", None)[0] == 2  # every project


def test_a_kinds_stamp_moves_when_a_fragment_file_changes_but_not_its_embedded_text(open_store):
    """A merge that confirms a decision rewrites its file's properties (confidence, tags)
    and keeps its summary and facts: the text embedded is the same, so the document keeps
    its revision; archiving keeps its content. The stamp moves all the same."""
    store = open_store()
    decision = dataclasses.replace(
        fragment("d", "use the pool"), mtime=100.0, meta={"tags": ["decision"], "confidence": 0.7}
    )
    store.write_documents([decision], [])
    store.sync()
    first = store.kind_stamp("fragment", "demo")

    confirmed = dataclasses.replace(
        decision, mtime=160.0, meta={"tags": ["decision"], "confidence": 0.9}, content_hash="c2"
    )
    store.write_documents([confirmed], [])
    store.sync()
    second = store.kind_stamp("fragment", "demo")
    assert second != first

    store.write_documents([dataclasses.replace(confirmed, archived=True)], [])
    store.sync()
    assert store.kind_stamp("fragment", "demo") != second
