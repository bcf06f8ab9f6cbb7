"""Search on several replicas: an event posted to one replica is found by a search on
another, lexically as soon as it is indexed (the index is the database's) and by meaning
within seconds (each replica holds vectors in memory and follows the others' writes)."""

from __future__ import annotations

import hashlib
import time

import httpx
import pytest

from tests.embeddings.conftest import SERVER_DIM, EmbeddingServer
from tests.helpers import envelope
from tests.replicas.conftest import found, replica

FOLLOWED_WITHIN = 5.0  # seconds: a follower looks every second


def _slot(word: str) -> int:
    """The slot of the test embedding server's bag-of-words vector a word adds to."""
    return int(hashlib.sha256(word.encode()).hexdigest(), 16) % SERVER_DIM


def same_meaning(word: str, avoid: set[str]) -> str:
    """Another word the test embedder maps to the same vector as ``word``: a query of it
    shares no term with the document, so only a search by meaning finds it."""
    for n in range(10_000):
        other = f"q{n}x"
        if _slot(other) == _slot(word) and other not in avoid:
            return other
    raise AssertionError("no word found")


def command(session: str, n: int, text: str) -> dict:
    return envelope(
        session, n, data={"tool_name": "Bash", "tool_input": {"command": text}, "tool_output": ""}
    )


def post(server, body: dict) -> None:
    answer = httpx.post(f"{server.url}/agentmemory/observe", json=body, timeout=30)
    assert answer.status_code == 201, answer.text


def within(seconds: float, predicate) -> float | None:
    """How long ``predicate`` took to hold, or None when it did not within ``seconds``."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.1)
    return None


@pytest.fixture
def embedding_server():
    with EmbeddingServer() as server:
        yield server


@pytest.fixture
def two_replicas(postgres_cluster, tmp_path, embedding_server):
    url = postgres_cluster.database()
    env = {"MEMVAULT_EMBEDDINGS": "openai", "MEMVAULT_EMBEDDING_URL": embedding_server.base_url}
    started = []
    try:
        for name in ("a", "b"):
            started.append(replica(tmp_path / name, url, env).start())
        yield started
    finally:
        for running in started:
            running.kill()


def test_an_event_posted_to_one_replica_is_found_on_another_by_words_then_by_meaning(
    two_replicas,
):
    a, b = two_replicas
    # A first event, found by meaning on b: b's model answered and its vectors are loaded
    # (it loads them on its first search by meaning), before the event that follows.
    words = {"bash", "the", "signing", "keys", "bump", "lockfile", "zebrafish"}
    post(a, command("on-a", 1, "bump the lockfile"))
    assert within(30, lambda: found(b, same_meaning("lockfile", words), "on-a-e1")) is not None

    post(a, command("on-a", 2, "zebrafish signing keys"))
    assert within(30, lambda: found(a, "zebrafish", "on-a-e2")) is not None
    assert found(b, "zebrafish", "on-a-e2")  # the same index: at once

    took = within(FOLLOWED_WITHIN, lambda: found(b, same_meaning("zebrafish", words), "on-a-e2"))
    assert took is not None, f"b did not find a's event by meaning:\n{b.log()}"
