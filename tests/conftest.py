"""Shared fixtures: real stores on real files."""

from __future__ import annotations

import os

import pytest

# Tests that exercise semantic search ask for an embedder themselves; everything else
# (and every server a test starts) stays lexical, so no test loads a model it does not use.
os.environ["MEMVAULT_EMBEDDINGS"] = "none"

from memvault import Memory


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
