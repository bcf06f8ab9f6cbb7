"""Memory with an OpenAI-compatible embedding endpoint: hybrid while it answers, lexical
(never an error) when it does not."""

from __future__ import annotations

from memvault import Memory
from memvault.vault.remember import Draft
from tests.embeddings.conftest import require_packaged_model


def observe(memory, n, text):
    memory.observe(
        {
            "hookType": "prompt_submit",
            "sessionId": "s",
            "project": "demo",
            "cwd": "/c",
            "timestamp": f"2026-11-30T10:00:0{n}Z",
            "eventId": f"e{n}",
            "data": {"prompt": text},
        }
    )


def test_search_and_remember_fall_back_to_words_when_the_endpoint_fails(tmp_path, embedding_server):
    settings = {"embeddings": "openai", "embedding_url": embedding_server.base_url}
    with Memory.open(home=tmp_path / "h", **settings) as memory:
        observe(memory, 1, "rotate the signing keys")
        observe(memory, 2, "bump the lockfile")
        memory.index.semantic.warm()
        memory.index.index_now()
        hits = memory.search("signing keys", kinds=["observation"])
        assert hits[0].semantic is not None  # the endpoint answered: hybrid
        embedding_server.mode = "error"
        hits = memory.search("signing keys please", kinds=["observation"])  # a new query
        assert hits[0].document.event_ids == ["e1"] and hits[0].semantic is None
        done = memory.remember(Draft(project="demo", summary="keys rotate yearly", facts=["k: v"]))
        assert done.action == "created" and done.path.exists()
        assert memory.context.context(project="demo", query="keys").text.startswith("📖")


def test_a_store_embedded_by_another_model_is_embedded_again_not_searched_across(
    tmp_path, embedding_server
):
    """Vectors carry their embedder's name: after a change of model (here a 16-dimensional
    endpoint, then the packaged 384-dimensional e5, then the endpoint again) every document
    is embedded anew and a search reads only the current model's vectors."""
    require_packaged_model()
    home = tmp_path / "h"
    endpoint = {"embeddings": "openai", "embedding_url": embedding_server.base_url}
    with Memory.open(home=home, **endpoint) as before:
        observe(before, 1, "rotate the signing keys")
        observe(before, 2, "bump the lockfile")
        before.index.semantic.warm()
        before.index.index_now()
        old_model = before.index.semantic.model
        embedded = len(before.store.vectors(old_model))
        assert embedded >= 2
    with Memory.open(home=home, embeddings="local") as after:
        after.index.semantic.warm()
        assert after.index.semantic.model != old_model
        assert after.index.semantic.pending() == embedded  # nothing counts as embedded yet
        after.index.index_now()
        assert after.index.semantic.pending() == 0
        new_vectors = after.store.vectors(after.index.semantic.model)
        assert len(new_vectors) == embedded
        assert {len(blob) for _, _, blob in new_vectors} == {384 * 4}
        hits = after.search("cryptographic credentials renewal", kinds=["observation"])
        assert hits[0].document.event_ids == ["e1"] and hits[0].semantic is not None
    with Memory.open(home=home, **endpoint) as back:
        # The store holds one vector per document: e5's replaced the endpoint's, so the
        # endpoint's model, back again, embeds everything anew rather than finding nothing.
        back.index.semantic.warm()
        assert back.index.semantic.pending() == embedded
        back.index.index_now()
        assert len(back.store.vectors(back.index.semantic.model)) == embedded
        assert back.search("signing keys")[0].semantic is not None
    with Memory.open(home=home, **endpoint) as again:
        again.index.semantic.warm()
        assert again.index.semantic.pending() == 0  # the same model again: nothing to redo


def test_a_fragment_waiting_for_its_vector_is_embedded_once_for_every_later_comparison(
    tmp_path, embedding_server
):
    """Saving compares a draft with each fragment of its project by meaning. A fragment the
    background has not embedded yet is embedded for the comparison, once: while a backlog
    is embedded, a session's extraction had embedded every such fragment again for each of
    its drafts, so each job took longer as the project's fragments grew."""
    settings = {"embeddings": "openai", "embedding_url": embedding_server.base_url}
    with Memory.open(home=tmp_path / "h", **settings) as memory:
        memory.index.semantic.warm()
        topics = ["signing keys", "lockfile", "retry budget", "cache warmup", "log levels"]
        for topic in topics:
            memory.remember(Draft(project="demo", summary=f"The {topic} rule.", facts=["k: v"]))
        sent = [text for _, _, body in embedding_server.requests for text in body["input"]]
        repeated = {text: sent.count(text) for text in sent if sent.count(text) > 1}
        assert repeated == {}, repeated
        # Still compared by meaning: a saved repeat merges into the one already there.
        again = memory.remember(Draft(project="demo", summary="The lockfile rule.", facts=["k: v"]))
        assert again.action == "merged"
