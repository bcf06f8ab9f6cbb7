"""Memory with an OpenAI-compatible embedding endpoint: hybrid while it answers, lexical
(never an error) when it does not."""

from __future__ import annotations

from memvault import Memory
from memvault.vault.remember import Draft


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
        memory.semantic.warm()
        memory.index_now()
        hits = memory.search("signing keys")
        assert hits[0].semantic is not None  # the endpoint answered: hybrid
        embedding_server.mode = "error"
        hits = memory.search("signing keys please")  # a new query: needs the endpoint
        assert hits[0].document.event_ids == ["e1"] and hits[0].semantic is None
        done = memory.remember(Draft(project="demo", summary="keys rotate yearly", facts=["k: v"]))
        assert done.action == "created" and done.path.exists()
        assert memory.context(project="demo", query="keys").text.startswith("📖")
