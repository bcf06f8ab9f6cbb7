"""Vectors in memory on several processes sharing one PostgreSQL store: each follows what
the others embed, and a change of model embeds everything anew there too."""

from __future__ import annotations

import pytest

from tests.helpers import IN_CI

if not IN_CI:  # without the postgres extra, a skip here; CI must run every test
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

from memvault.embeddings.openai_compatible import OpenAICompatibleEmbedder
from memvault.search.semantic import Semantic
from memvault.store.postgres import PostgresStore
from tests.embeddings.conftest import EmbeddingServer
from tests.store.test_vector_changes import draft


@pytest.fixture
def endpoint():
    with EmbeddingServer() as server:
        yield server.base_url


@pytest.fixture
def stores(postgres_cluster):
    url = postgres_cluster.database()
    opened = [PostgresStore(url, pool_size=2) for _ in range(2)]
    yield opened
    for store in opened:
        store.close()


def semantic(store, endpoint: str, model: str = "m1") -> Semantic:
    return Semantic(store, OpenAICompatibleEmbedder(endpoint, model=model))


def test_a_process_takes_in_the_vectors_another_one_embedded(stores, endpoint):
    here, there = semantic(stores[0], endpoint), semantic(stores[1], endpoint)
    stores[0].write_documents([draft("a", "rotate the signing keys")])
    assert there.search("keys", kinds=["fragment"], limit=5) == []  # loaded, empty
    assert here.embed_pending() == 1
    assert there.follow() == 1
    [(doc_id, cosine)] = there.search("signing keys", kinds=["fragment"], limit=5)
    assert cosine > 0.5
    assert there.follow() == 0  # nothing new: one read of the cursor

    stores[1].write_documents([draft("a", "bump the lockfile")])  # rewritten elsewhere
    assert here.embed_pending() == 1
    assert there.follow() == 1
    assert there.vector(doc_id) is not None
    [(_, cosine)] = there.search("a bump the lockfile", kinds=["fragment"], limit=5)
    assert cosine > 0.99


def test_a_change_of_model_embeds_every_document_again(stores, endpoint):
    store = stores[0]
    store.write_documents([draft("a", "rotate the signing keys"), draft("b", "bump")])
    first = semantic(store, endpoint, "m1")
    assert first.embed_pending() == 2 and first.pending() == 0
    second = semantic(store, endpoint, "m2")
    assert second.pending() == 2  # nothing counts as embedded for the new model
    assert second.embed_pending() == 2
    back = semantic(store, endpoint, "m1")
    assert back.pending() == 2  # m2 replaced m1's vectors: m1 embeds anew
    assert back.embed_pending() == 2
    assert len(store.vectors("openai:m1@" + endpoint)) == 2
