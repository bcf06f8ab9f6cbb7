"""A server that leaves all background work to `memvault worker`: the worker indexes and
embeds, the server searches what it stored without indexing anything itself."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import httpx
import pytest

from tests.embeddings.conftest import SERVER_DIM, EmbeddingServer
from tests.helpers import envelope, wait_for


def same_slot_as(word: str) -> str:
    """A made-up word the test embedder puts where it puts ``word``: it matches ``word``
    by vector only, never by text."""

    def slot(text: str) -> int:
        return int(hashlib.sha256(text.encode()).hexdigest(), 16) % SERVER_DIM

    return next(f"zq{n}" for n in range(10_000) if slot(f"zq{n}") == slot(word))


@pytest.fixture
def embedding_server():
    with EmbeddingServer() as server:
        yield server


@pytest.mark.slow
def test_the_worker_indexes_and_embeds_and_the_server_follows(start_server, embedding_server):
    env = {
        "MEMVAULT_WORKER_IN_SERVER": "false",
        "MEMVAULT_EMBEDDINGS": "openai",
        "MEMVAULT_EMBEDDING_URL": embedding_server.base_url,
        "MEMVAULT_EMBEDDING_MODEL": "test-embedder",
    }
    running = start_server(env)
    data = {"prompt": "switch password hashing to bcrypt"}
    posted = httpx.post(
        f"{running.url}/agentmemory/observe",
        json={**envelope("split", 0), "hookType": "prompt_submit", "data": data},
    )
    assert posted.status_code in (200, 201), posted.text

    def found(query: str) -> list[str]:
        """search finds the prompt"""
        answer = httpx.post(
            f"{running.url}/agentmemory/search",
            json={"query": query, "kinds": ["observation"]},
            timeout=10,
        )
        return [hit["id"] for hit in answer.json()["results"]]

    assert found("bcrypt") == []  # the server indexes nothing itself
    worker = subprocess.Popen(
        [sys.executable, "-m", "memvault.cli", "worker"],
        env={**os.environ, **running.env, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: found("bcrypt"), timeout=60)  # indexed by the worker
        stranger = same_slot_as("bcrypt")
        wait_for(lambda: found(stranger), timeout=60)  # its vector reached the server
    finally:
        worker.terminate()
        worker.wait(30)
