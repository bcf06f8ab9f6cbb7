"""Following vectors by revision (``vector_changes``), on every engine: what an in-memory
vector index reads to keep up with vectors another process wrote, and with documents
whose vector another process's rewrite made stale."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from memvault.domain import DocumentDraft
from memvault.search.documents import terms

AT = "2026-11-30T10:00:00.000Z"


def draft(key: str, text: str, kind: str = "fragment") -> DocumentDraft:
    return DocumentDraft(
        kind=kind,
        key=key,
        title=key,
        summary=text,
        body=text,
        terms=(terms(key), terms(text), "", ""),
        embed_text=f"{key}\n{text}",
        importance=0.5,
        updated_at=AT,
        content_hash=hashlib.sha256(f"{key}|{text}".encode()).hexdigest(),
        project="demo",
    )


def test_vector_changes_name_each_changed_document_with_its_vector_or_none(store):
    store.write_documents([draft("a", "alpha"), draft("b", "beta"), draft("c", "gamma")])
    pending = store.documents_to_embed(0, limit=10)
    assert len(pending) == 3
    (a, ra, _), (b, rb, _), (c, rc, _) = pending
    store.write_vectors("m", [(a, ra, b"AAAA"), (b, rb, b"BBBB")], cursor=("vectors:m", rb))
    store.write_vectors("other", [(c, rc, b"CCCC")], cursor=("vectors:other", rc))

    changes = store.vector_changes("m", 0, rc, limit=10)
    assert changes == [
        (a, "fragment", ra, b"AAAA"),
        (b, "fragment", rb, b"BBBB"),
        (c, "fragment", rc, None),  # another model's vector is not this model's
    ]
    assert store.vector_changes("m", ra, rb, limit=10) == [(b, "fragment", rb, b"BBBB")]
    assert store.vector_changes("m", 0, rc, limit=1) == [(a, "fragment", ra, b"AAAA")]
    assert store.vector_changes("m", rc, rc, limit=10) == []


def test_a_rewritten_document_shows_at_its_new_revision_without_its_old_vector(store):
    store.write_documents([draft("a", "alpha")])
    [(a, ra, _)] = store.documents_to_embed(0, limit=10)
    store.write_vectors("m", [(a, ra, b"AAAA")], cursor=("vectors:m", ra))
    store.write_documents([draft("a", "alpha, said otherwise")])
    [(same, rewritten, _)] = store.documents_to_embed(ra, limit=10)
    assert same == a and rewritten > ra
    assert store.vector_changes("m", 0, rewritten, limit=10) == [(a, "fragment", rewritten, None)]
    assert store.vector_changes("m", 0, ra, limit=10) == []  # it is no longer at ra


def test_embeddable_names_the_documents_that_get_a_vector(store):
    """What search asks of its word candidates that have no vector: which of them will."""
    tool_call = replace(draft("c", "pytest -q"), embed_text="")  # found by its words alone
    store.write_documents([draft("a", "alpha"), draft("b", "beta"), tool_call])
    a, b, c = (store.document("fragment", key).id for key in "abc")
    assert store.embeddable([a, b, c]) == {a, b}
    assert store.embeddable([c]) == set() and store.embeddable([]) == set()
