"""Shared fixtures: real stores on real files, and real servers on loopback."""

from __future__ import annotations

import os

import pytest

# Tests that exercise semantic search ask for an embedder themselves; everything else
# (and every server a test starts) stays lexical, so no test loads a model it does not use.
os.environ["MEMVAULT_EMBEDDINGS"] = "none"
# Without the setting the locale picks the language; the suite's expected strings are the
# zh-Hant ones whatever the machine's locale (tests of the locale choice clear this).
os.environ["MEMVAULT_LANGUAGE"] = "zh-Hant"

from memvault import Memory
from tests.helpers import Server


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home") as opened:
        yield opened


@pytest.fixture(scope="session")
def postgres_cluster():
    """One throwaway PostgreSQL cluster for the whole run (per xdist worker); tests ask it
    for a fresh database with ``postgres_cluster.database()``."""
    from tests.postgres_cluster import start_or_skip

    cluster = start_or_skip()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A real ``memvault serve``, shared by a module's tests."""
    running = Server(tmp_path_factory.mktemp("server") / "home").start()
    yield running
    running.stop()


@pytest.fixture
def start_server(tmp_path):
    """Start servers with their own settings; all are stopped after the test."""
    started: list[Server] = []

    def start(env: dict[str, str] | None = None, name: str = "home") -> Server:
        running = Server(tmp_path / name, env).start()
        started.append(running)
        return running

    yield start
    for running in started:
        running.kill()
