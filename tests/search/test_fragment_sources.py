"""A fragment's document lists every session merged into it, in a store indexed before it
did too (the upgrade reads fragments again from their files)."""

from __future__ import annotations

from memvault import Memory
from memvault.search import documents
from memvault.store import migrations
from memvault.vault.remember import Draft

SAID = "The payments client retries a 429 after the seconds its Retry-After header gives."


def _said_in(memory: Memory, *sessions: str) -> None:
    for session in sessions:
        memory.fragments.remember(
            Draft("shop", SAID, [f"finding: {SAID}"], confidence=0.7, source=f"session {session}")
        )
    memory.index.index_now()


def _sources(memory: Memory) -> list[str]:
    (fragment,) = memory.store.list_documents("fragment", project="shop")
    return [fragment.meta.get("source"), *(fragment.meta.get("sources") or [])]


def test_a_merged_fragment_lists_each_session_it_came_from(tmp_path):
    with Memory.open(home=tmp_path / "home", embeddings="none", llm="none") as memory:
        _said_in(memory, "first", "second")
        assert _sources(memory) == ["session first", "session first", "session second"]


def test_a_store_indexed_before_reads_its_fragments_again(tmp_path, monkeypatch):
    home = tmp_path / "home"
    load, made = migrations.load, documents.fragment_document
    with monkeypatch.context() as before:
        before.setattr(migrations, "load", lambda e: [m for m in load(e) if m.version < 18])

        def without_sources(*args, **kwargs):
            draft = made(*args, **kwargs)
            draft.meta.pop("sources")
            return draft

        before.setattr(documents, "fragment_document", without_sources)
        with Memory.open(home=home, embeddings="none", llm="none") as old:
            _said_in(old, "first", "second")
            assert _sources(old) == ["session first"]
    with Memory.open(home=home, embeddings="none", llm="none") as memory:
        memory.index.index_now()
        assert _sources(memory) == ["session first", "session first", "session second"]
