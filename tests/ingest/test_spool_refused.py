"""A spooled event the server refuses as bad input (here text no store can hold, U+0000
in its session id) is set aside in ``spool/bad/`` at once, on SQLite and PostgreSQL
alike, and never stands in front of the good events behind it; ``/health`` and ``doctor``
say how many were set aside and where."""

from __future__ import annotations

import json

import httpx
import pytest

from memvault.config import Settings
from memvault.doctor.finding import PROBLEM
from memvault.doctor.storage import check_spool
from memvault.hook import spool
from tests.helpers import IN_CI, Server, envelope, wait_for


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_spooled_events_refused_as_bad_are_set_aside_and_the_good_ones_drain(
    engine, tmp_path, request
):
    env: dict[str, str] = {}
    if engine == "postgres":
        if not IN_CI:
            pytest.importorskip("psycopg", reason="the postgres extra is not installed")
        env["MEMVAULT_STORE_URL"] = request.getfixturevalue("postgres_cluster").database()
    home = tmp_path / "home"
    folder = home / "spool"
    bad = [
        spool.put(str(folder), json.dumps(envelope(f"a\u0000{n}", n)).encode()) for n in range(60)
    ]
    for n in range(5):
        spool.put(str(folder), json.dumps(envelope("good", n)).encode())
    server = Server(home, env).start()
    try:

        def delivered():
            """the five good events are stored"""
            found = httpx.get(
                f"{server.url}/agentmemory/observations", params={"sessionId": "good"}
            ).json()["observations"]
            return len(found) == 5

        # Stored first, then taken out of the spool: wait for both.
        wait_for(lambda: delivered() and not spool.pending(str(folder)), timeout=30)
        assert spool.pending(str(folder)) == []
        assert spool.set_aside(str(folder)) == sorted(bad)
        assert "NUL character" in server.log()
        queue = httpx.get(f"{server.url}/agentmemory/health", timeout=30).json()["queue"]
        assert queue["spooledSetAside"] == 60
        assert queue["spoolSetAsideFolder"] == str(folder / spool.BAD)
    finally:
        server.stop()
    finding = check_spool(Settings(home=home), running=False)
    assert finding.level == PROBLEM
    assert "60 spooled file(s)" in finding.finding and str(folder / spool.BAD) in finding.finding
