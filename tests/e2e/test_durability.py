"""Nothing acknowledged is lost: SIGKILL the server mid-stream, restart, retry, count."""

from __future__ import annotations

import random
import sqlite3
import threading
from collections import deque

import httpx
import pytest

from tests.helpers import Server, envelope

TOTAL = 3000
CLIENTS = 4
KILLS = 4


@pytest.mark.slow
def test_every_acknowledged_event_survives_sigkill_exactly_once(tmp_path):
    server = Server(tmp_path / "home")
    pending: deque[int] = deque(range(TOTAL))
    acknowledged: set[int] = set()
    lock = threading.Lock()
    rng = random.Random(7)

    def client(stop: threading.Event) -> None:
        with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=5) as http:
            while not stop.is_set():
                with lock:
                    if not pending:
                        return
                    n = pending.popleft()
                body = envelope(f"crash-{n % 3}", n, eventId=f"evt-{n}")
                try:
                    response = http.post("/observe", json=body)
                except httpx.TransportError:
                    with lock:
                        pending.append(n)  # unacknowledged: the client will retry it
                    stop.wait(0.02)
                    continue
                assert response.status_code == 201, response.text
                with lock:
                    acknowledged.add(n)

    for round_number in range(KILLS + 1):
        server.start()
        stop = threading.Event()
        threads = [threading.Thread(target=client, args=(stop,)) for _ in range(CLIENTS)]
        for thread in threads:
            thread.start()
        if round_number < KILLS:
            threading.Event().wait(rng.uniform(0.4, 1.2))
            before_kill = set(acknowledged)
            server.kill()  # SIGKILL: no shutdown, no flush
            stop.set()
        for thread in threads:
            thread.join(60)
        if round_number < KILLS:
            with sqlite3.connect(tmp_path / "home" / "memvault.db") as db:
                stored = {row[0] for row in db.execute("SELECT client_event_id FROM events")}
            lost = {f"evt-{n}" for n in before_kill} - stored
            assert not lost, f"acknowledged before the kill but gone after it: {sorted(lost)[:5]}"
    server.stop()

    assert acknowledged == set(range(TOTAL))
    with sqlite3.connect(tmp_path / "home" / "memvault.db") as db:
        ids = [row[0] for row in db.execute("SELECT client_event_id FROM events")]
        observations = db.execute("SELECT count(*) FROM observations").fetchone()[0]
        counted = db.execute("SELECT sum(event_count) FROM sessions").fetchone()[0]
    assert len(ids) == len(set(ids)) == TOTAL
    assert observations == counted == TOTAL
