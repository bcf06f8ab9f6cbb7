"""What /health and `memvault status` tell a user or a script: where memory lives, what
embeds and summarizes it, how much there is, and how far search is behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from tests.helpers import Server, envelope, wait_for


def health(server) -> dict:
    return httpx.get(f"{server.url}/agentmemory/health", timeout=10).json()


def caught_up(server, through: int):
    def done():
        """the index reached the last event posted, with nothing left to embed"""
        index = health(server)["index"]
        return index if index["caughtUp"] and index["lastEventSeq"] >= through else None

    return done


def memvault(*args: str, url: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "MEMVAULT_URL": url, "COLUMNS": "300"}  # no path cut short
    return subprocess.run(
        [sys.executable, "-m", "memvault.cli", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=30,
    )


def test_health_names_the_vault_the_embedder_the_llm_and_the_counts(start_server):
    server = start_server()
    session = {"sessionId": "vis-1", "project": "demo-app", "cwd": "/c", "agentId": "cursor"}
    with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=30) as client:
        assert client.post("/session/start", json=session).status_code == 200
        fragment = {"project": "demo-app", "summary": "Tests run with npm", "facts": ["npm t"]}
        assert client.post("/remember", json=fragment).status_code == 201
        for n in range(3):
            assert client.post("/observe", json=envelope("vis-1", n)).status_code == 201

    def board_mirrored():
        """the board watcher mirrored the new row"""
        report = health(server)
        return report if report["vault"]["boardRows"] else None

    report = wait_for(board_mirrored)
    vault = server.home / "vault"
    assert report["vault"] == {
        "path": str(vault),
        "fragmentsFolder": str(vault / "agent-memory"),
        "boardRows": 1,
        "fragments": 1,
        "archivedFragments": 0,
        "syncConflicts": [],
    }
    assert report["embedder"] == {
        "provider": "none",
        "model": None,
        "dimension": None,
        "loaded": False,
        "reason": "MEMVAULT_EMBEDDINGS=none",
    }
    assert report["llm"]["provider"] == "none" and report["llm"]["reason"]
    assert report["store"]["observations"] == 3


def test_a_script_waits_for_the_index_to_take_in_events_it_posted(start_server):
    server = start_server()
    items = [
        envelope("vis-bulk", n, hookType="prompt_submit", data={"prompt": f"backlog marker {n}"})
        for n in range(400)
    ]
    with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=30) as client:
        answer = client.post("/observe/bulk", json={"observations": items}).json()
        last = max(result["eventSeq"] for result in answer["results"])
        index = wait_for(caught_up(server, last), timeout=60)
        assert index["eventsNotIndexed"] == 0 and index["indexedThroughSeq"] == last
        assert index["documentsNotEmbedded"] is None  # no embedder: nothing to wait for
        hits = client.post("/search", json={"query": "backlog marker 399"}).json()["results"]
        assert any("vis-bulk-e399" in hit["eventIds"] for hit in hits)


@pytest.fixture
def model_server(tmp_path):
    """Start a server with a local model; it loads the model before it
    answers, which takes longer than the usual start on a busy CPU."""
    started: list[Server] = []

    def start(env: dict[str, str]) -> Server:
        server = Server(tmp_path / "home", {"MEMVAULT_EMBEDDINGS": "local", **env})
        started.append(server.start(timeout=300))
        return server

    yield start
    for server in started:
        server.kill()


def test_with_a_local_model_the_index_waits_for_every_document_to_be_embedded(model_server):
    server = model_server({})
    items = [envelope("vis-vec", n) for n in range(40)]
    with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=30) as client:
        answer = client.post("/observe/bulk", json={"observations": items}).json()
    last = max(result["eventSeq"] for result in answer["results"])
    index = wait_for(caught_up(server, last), timeout=120)
    assert index["documentsNotEmbedded"] == 0
    assert health(server)["embedder"] == {
        "provider": "local",
        "model": "multilingual-e5-small-q4-c1-w256",
        "dimension": 384,
        "loaded": True,
        "reason": None,
    }


def test_a_local_model_that_fails_to_load_is_named_with_the_failure(model_server):
    server = model_server(
        {
            "MEMVAULT_EMBEDDING_MODEL": "/nowhere/no-such-model",
            "HF_HUB_OFFLINE": "1",  # fail at once rather than after the hub's retries
        }
    )
    embedder = health(server)["embedder"]
    assert (embedder["provider"], embedder["loaded"]) == ("local", False)
    assert embedder["reason"].startswith("failed to load:")
    assert "no-such-model" in embedder["reason"]


def test_status_shows_the_new_rows_in_words_and_json_for_scripts(start_server):
    server = start_server()
    httpx.post(f"{server.url}/agentmemory/observe", json=envelope("vis-status"), timeout=10)
    wait_for(caught_up(server, 1), timeout=30)
    table = memvault("status", url=server.url)
    assert table.returncode == 0, table.stderr
    text = " ".join(table.stdout.replace("│", " ").split())
    for words in (
        f"vault {server.home / 'vault'}",
        "board rows",
        "fragments 0 (0 archived)",
        "embedder none (MEMVAULT_EMBEDDINGS=none): search is lexical",
        "LLM none",
        "search index caught up (through event 1)",
    ):
        assert words in text, text
    scripted = json.loads(memvault("status", "--json", url=server.url).stdout)
    assert scripted["index"]["caughtUp"] is True
    assert scripted["vault"]["path"] == str(server.home / "vault")


def test_a_started_server_says_once_where_it_answers_what_it_loaded_and_what_to_run_next(
    start_server,
):
    server = start_server()
    log = server.log()
    assert log.count("is ready at") == 1, log
    ready = log[log.index("memvault ") :]
    for words in (
        f"is ready at {server.url}",
        f"store     {server.home / 'memvault.db'} (sqlite, 0 events)",
        f"vault     {server.home / 'vault'} (0 board rows, 0 fragments)",
        "embedder  none (MEMVAULT_EMBEDDINGS=none): search is lexical",
        "LLM       none (none configured: summaries are extractive)",
        "memvault install claude-code",
        "memvault install cursor",
        "memvault doctor",
        f"{server.url}/docs",
    ):
        assert words in ready, log
