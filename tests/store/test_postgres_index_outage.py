"""On PostgreSQL the search index and the graph fail as the rest of the store does when the
database goes away: ``StoreUnavailable`` (a 503 at the API), never a driver error; a read
count, queued, does not hold up the read that counts it."""

from __future__ import annotations

import time

import pytest

from tests.helpers import IN_CI

if not IN_CI:  # without the postgres extra, a skip here; CI must run every test
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

import psycopg

from memvault.errors import StoreUnavailable
from memvault.graph.model import GraphDelta
from memvault.search.query import parse
from memvault.store.postgres import PostgresStore
from tests.store.test_vector_changes import draft


def test_index_and_graph_calls_fail_as_store_unavailable_while_the_database_is_away(
    postgres_cluster,
):
    url = postgres_cluster.database()
    store = PostgresStore(url, pool_size=2, wait=0.5)
    name = url.rsplit("/", 1)[1]
    calls = {
        "write_documents": lambda: store.write_documents([draft("a", "alpha")]),
        "lexical_search": lambda: store.lexical_search(parse("alpha").match(), kinds=["fragment"]),
        "term_counts": lambda: store.term_counts(["alpha"], cap=10),
        "documents": lambda: store.documents([1]),
        "cursor": lambda: store.cursor("vectors:m"),
        "vector_changes": lambda: store.vector_changes("m", 0, 10, limit=10),
        "graph_stats": store.graph_stats,
        "write_fragment_graph": lambda: store.write_fragment_graph(GraphDelta()),
    }
    try:
        store.write_documents([draft("a", "alpha")])
        with psycopg.connect(postgres_cluster.url, autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (name,),
            )
            try:
                failed = {}
                for what, call in calls.items():
                    try:
                        call()
                    except StoreUnavailable:
                        failed[what] = "StoreUnavailable"
                    except Exception as exc:  # which error is the point
                        failed[what] = type(exc).__name__
                    else:
                        failed[what] = "passed"
                # A read count is queued, not waited for: the search that counts it
                # answers, and the failure shows in write_trouble.
                started = time.monotonic()
                store.record_access([("fragment", "a")], "2026-12-01T00:00:00.000Z")
                assert time.monotonic() - started < 0.2
                store.sync()
                assert store.write_trouble() is not None
            finally:
                admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        assert failed == dict.fromkeys(calls, "StoreUnavailable")
    finally:
        store.close()


def test_read_counts_queued_are_written_by_sync_and_by_close(postgres_cluster):
    url = postgres_cluster.database()
    store = PostgresStore(url, pool_size=2)
    store.write_documents([draft("a", "alpha")])
    for _ in range(3):
        store.record_access([("fragment", "a")], "2026-12-01T00:00:00.000Z")
    store.sync()
    assert store.document("fragment", "a").access_count == 3
    store.record_access([("fragment", "a")], "2026-12-01T00:00:01.000Z")
    store.close()
    reopened = PostgresStore(url, pool_size=2)
    try:
        counted = reopened.document("fragment", "a")
        assert (counted.access_count, counted.last_accessed) == (4, "2026-12-01T00:00:01.000Z")
    finally:
        reopened.close()
