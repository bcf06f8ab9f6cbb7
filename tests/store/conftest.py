"""Every engine runs the same contract tests: add an engine to ``ENGINES`` and it is covered.

PostgreSQL runs in a throwaway cluster the tests start themselves (``postgres_cluster``),
a fresh database for each test. Tests marked ``sqlite_only`` pin what only the SQLite
engine has (its file, WAL, the writer thread, FTS5 syntax) and run on SQLite alone.
"""

from __future__ import annotations

import pytest

from memvault.store.sqlite import SQLiteStore
from tests.helpers import IN_CI

ENGINES = ["sqlite", "postgres"]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sqlite_only: what only the SQLite engine has; not run on other engines"
    )


def pytest_collection_modifyitems(config, items):
    kept, dropped = [], []
    for item in items:
        engine = getattr(item, "callspec", None) and item.callspec.params.get("open_store")
        if engine not in (None, "sqlite") and item.get_closest_marker("sqlite_only"):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(params=ENGINES)
def open_store(request, tmp_path):
    """A factory that opens (or reopens) the same store; everything opened is closed after."""
    opened = []
    if request.param == "postgres":
        if not IN_CI:  # without the postgres extra, a skip here; CI must run every test
            pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
        from memvault.store.postgres import PostgresStore

        url = request.getfixturevalue("postgres_cluster").database()

        def connect():
            return PostgresStore(url, pool_size=4)
    else:

        def connect():
            return SQLiteStore(tmp_path / "memvault.db")

    def factory():
        store = connect()
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store):
    return open_store()
