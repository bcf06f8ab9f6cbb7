"""With PostgreSQL away, ``/health`` still answers: 200, ``degraded``, with the reason
naming the store, rather than a 503 of the health route itself; ``ok`` again once the
database is back."""

from __future__ import annotations

import contextlib

import httpx
import pytest

from tests.helpers import IN_CI, Server, wait_for

if not IN_CI:
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

import psycopg

from tests.postgres_cluster import start_or_skip


def test_health_with_postgres_away_is_degraded_naming_the_store(tmp_path):
    cluster = start_or_skip()  # its own: this test stops it
    server = None
    try:
        database = cluster.database()
        server = Server(tmp_path / "home", {"MEMVAULT_STORE_URL": database}).start()
        health = f"{server.url}/agentmemory/health"
        assert httpx.get(health, timeout=60).json()["status"] == "ok"
        # The throwaway cluster commits asynchronously (synchronous_commit=off): flush what
        # the server's migrations committed a moment ago, or the immediate stop could lose
        # it and the database come back without its tables.
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
        cluster._pg("pg_ctl", "-D", str(cluster.data), "-m", "immediate", "-w", "stop")

        answer = httpx.get(health, timeout=60)
        assert answer.status_code == 200, answer.text
        report = answer.json()
        assert report["status"] == "degraded"
        assert any("PostgreSQL" in reason and "cannot be reached" in reason
                   for reason in report["reasons"]), report["reasons"]  # fmt: skip
        assert report["store"]["engine"] == "postgres"

        options = (
            f"-p {cluster.port} -k {cluster.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        )
        cluster._pg("pg_ctl", "-D", str(cluster.data), "-l", str(cluster.folder / "log"),
                    "-o", options, "-w", "-t", "60", "start")  # fmt: skip

        def healthy():
            """health is ok again"""
            return httpx.get(health, timeout=60).json()["status"] == "ok"

        wait_for(healthy, timeout=60, interval=0.5)
    finally:
        if server is not None:
            server.kill()
        with contextlib.suppress(RuntimeError):
            cluster.stop()
