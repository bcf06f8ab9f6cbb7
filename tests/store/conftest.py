"""Every engine runs the same contract tests: add an engine to ``ENGINES`` and it is covered."""

from __future__ import annotations

import pytest

from memvault.store.sqlite import SQLiteStore

ENGINES = ["sqlite"]


@pytest.fixture(params=ENGINES)
def open_store(request, tmp_path):
    """A factory that opens (or reopens) the same store; everything opened is closed after."""
    opened = []

    def factory():
        store = SQLiteStore(tmp_path / "memvault.db")
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store):
    return open_store()
