"""Replicas following the same log into one search index: a batch another replica already
wrote is dropped whole, so no cursor moves back and no older draft overwrites a newer one."""

from __future__ import annotations

import pytest

from memvault.domain import DocumentDraft
from memvault.store.postgres import PostgresStore

CURSOR = "index:observations"


def draft(key: str, body: str) -> DocumentDraft:
    return DocumentDraft(
        kind="observation",
        key=key,
        title=key,
        summary="",
        body=body,
        terms=(key, body, "", ""),
        embed_text=body,
        importance=5.0,
        updated_at="2026-12-02T06:00:00.000Z",
        content_hash=body,
    )


@pytest.fixture
def replicas(postgres_cluster):
    url = postgres_cluster.database()
    opened = [PostgresStore(url, pool_size=2) for _ in range(2)]
    yield opened
    for store in opened:
        store.close()


def test_a_batch_behind_the_cursor_another_replica_moved_is_dropped(replicas):
    ahead, behind = replicas
    ahead.write_documents([draft("obs_150", "with its neighbours")], cursor=(CURSOR, 200))
    # Read the cursor before the other replica moved it; written after.
    behind.write_documents(
        [draft("obs_150", "without its neighbours"), draft("obs_90", "old")], cursor=(CURSOR, 100)
    )
    behind.write_documents([draft("obs_150", "the same batch again")], cursor=(CURSOR, 200))
    assert ahead.cursor(CURSOR) == 200 and behind.cursor(CURSOR) == 200
    assert behind.document("observation", "obs_150").body == "with its neighbours"
    assert behind.document("observation", "obs_90") is None
    assert ahead.document_count() == 1
    behind.write_documents([draft("obs_250", "next")], cursor=(CURSOR, 300))
    assert ahead.cursor(CURSOR) == 300 and ahead.document_count() == 2


def test_vectors_behind_the_embedding_cursor_are_dropped(replicas):
    ahead, behind = replicas
    ahead.write_documents([draft("obs_1", "one")])
    ((doc_id, revision, _),) = ahead.documents_to_embed(0, limit=10)
    ahead.write_vectors("m", [(doc_id, revision, b"\x01" * 8)], cursor=("vectors:m", 5))
    behind.write_vectors("m", [(doc_id, revision, b"\x02" * 8)], cursor=("vectors:m", 3))
    assert behind.cursor("vectors:m") == 5
    assert [blob for _, _, blob in behind.vectors("m")] == [b"\x01" * 8]
