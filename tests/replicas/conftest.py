"""Replicas: several `memvault serve` processes on one PostgreSQL database, each a real
process with a home of its own, started from the same database URL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.helpers import IN_CI, Server

if not IN_CI:  # without the postgres extra, a skip here; CI must run every test
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")


def replica(home: Path, url: str, env: dict[str, str] | None = None) -> Server:
    """A `memvault serve` on the database ``url`` (not started)."""
    return Server(home, {"MEMVAULT_STORE_URL": url, **(env or {})})


def worker_process(home: Path, url: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """A `memvault worker` process on the database ``url``."""
    home.mkdir(parents=True, exist_ok=True)
    environ = {**os.environ, "MEMVAULT_HOME": str(home), "MEMVAULT_STORE_URL": url, **(env or {})}
    environ.pop("MEMVAULT_URL", None)
    log = (home / "worker.log").open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "memvault.cli", "worker"],
        env=environ,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def found(server, query: str, event_id: str) -> bool:
    answer = httpx.post(
        f"{server.url}/agentmemory/search", json={"query": query, "limit": 20}, timeout=30
    )
    answer.raise_for_status()
    return any(event_id in (hit.get("eventIds") or []) for hit in answer.json()["results"])


@pytest.fixture(scope="module")
def database(postgres_cluster):
    """One database for the module's replicas."""
    return postgres_cluster.database()


@pytest.fixture(scope="module")
def replicas(database, tmp_path_factory):
    """Two replicas on the module's database, started once for the module."""
    started = []
    try:
        for name in ("a", "b"):
            started.append(replica(tmp_path_factory.mktemp(f"replica-{name}"), database).start())
        yield started
    finally:
        for running in started:
            running.kill()


@pytest.fixture
def launch():
    """Start replicas (``launch(replica(...))``) and keep worker processes
    (``launch(worker_process(...))``); whatever a test launched is killed after it, passed
    or failed."""
    launched: list[Server | subprocess.Popen] = []

    def start(thing):
        launched.append(thing)
        return thing.start() if isinstance(thing, Server) else thing

    yield start
    for thing in reversed(launched):
        if isinstance(thing, Server):
            thing.kill()
        elif thing.poll() is None:
            thing.kill()
            thing.wait(30)
