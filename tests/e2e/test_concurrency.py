"""Many clients sending the same events at once: exactly one row each."""

from __future__ import annotations

import random
import threading
import uuid

import httpx

from tests.helpers import envelope

CLIENTS = 10
EVENTS = 100


def test_concurrent_clients_posting_the_same_event_ids_store_each_once(server):
    session = f"conc-{uuid.uuid4().hex[:8]}"
    barrier = threading.Barrier(CLIENTS)
    answers: list[dict] = []
    lock = threading.Lock()

    def client(index: int) -> None:
        order = list(range(EVENTS))
        random.Random(index).shuffle(order)
        with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=30) as http:
            barrier.wait()
            if index % 3 == 0:  # some clients send the same events in bulk
                body = {"observations": [envelope(session, n) for n in order]}
                response = http.post("/observe/bulk", json=body)
                assert response.status_code == 200
                mine = [r for r in response.json()["results"]]
            else:
                mine = []
                for n in order:
                    response = http.post("/observe", json=envelope(session, n))
                    assert response.status_code == 201
                    mine.append(response.json())
        with lock:
            answers.extend(mine)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert len(answers) == CLIENTS * EVENTS
    fresh = [a for a in answers if not a.get("deduplicated")]
    assert len(fresh) == EVENTS
    stored = httpx.get(
        f"{server.url}/agentmemory/observations", params={"sessionId": session, "limit": 1000}
    ).json()["observations"]
    assert len(stored) == EVENTS
    ids_by_event = {o["eventId"]: o["id"] for o in stored}
    for answer in answers:
        if answer.get("deduplicated"):
            assert ids_by_event[answer["eventId"]] == answer["observationId"]
