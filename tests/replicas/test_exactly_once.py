"""Events posted to several replicas at once, and to a replica killed mid-ingest, are
stored exactly once, and every client is told the same about each."""

from __future__ import annotations

import threading
from collections import Counter

import httpx
import psycopg
import pytest

from tests.helpers import envelope, wait_for
from tests.replicas.conftest import replica

CLIENTS = 16
EVENTS = 30


def stored(database: str, session: str) -> Counter:
    """How many times each event id of ``session`` is in the database's log."""
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT client_event_id FROM events WHERE session_id = %s", (session,)
        ).fetchall()
    return Counter(row[0] for row in rows)


def test_clients_posting_the_same_ids_to_both_replicas_store_each_once(replicas, database):
    session = "same-ids"
    bodies = [envelope(session, n) for n in range(EVENTS)]
    answers: list[list[tuple[str, int, dict]]] = [[] for _ in range(CLIENTS)]
    start = threading.Barrier(CLIENTS)

    def client(k: int) -> None:
        # Half the clients post to each replica, half of them in reverse order, so the
        # same id reaches both replicas at about the same moment.
        url = f"{replicas[k % 2].url}/agentmemory/observe"
        order = bodies if k % 4 < 2 else bodies[::-1]
        with httpx.Client(timeout=30) as http:
            start.wait()
            for body in order:
                response = http.post(url, json=body)
                answers[k].append((body["eventId"], response.status_code, response.json()))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert stored(database, session) == Counter({b["eventId"]: 1 for b in bodies})
    by_event: dict[str, list[dict]] = {}
    for client_answers in answers:
        assert len(client_answers) == EVENTS
        for event_id, status, body in client_answers:
            assert status == 201, body
            by_event.setdefault(event_id, []).append(body)
    for event_id, bodies_told in by_event.items():
        winners = [b for b in bodies_told if "deduplicated" not in b]
        losers = [b for b in bodies_told if b.get("deduplicated") is True]
        assert len(winners) == 1 and len(losers) == CLIENTS - 1, (event_id, bodies_told)
        (winner,) = winners
        assert set(winner) == {"observationId", "eventSeq"}
        for loser in losers:
            assert loser == {
                "deduplicated": True,
                "sessionId": session,
                "eventId": event_id,
                "observationId": winner["observationId"],
            }


@pytest.mark.slow
def test_a_replica_killed_mid_ingest_loses_no_acknowledged_event_and_a_retry_stores_none_twice(
    replicas, database, tmp_path, launch
):
    session = "killed-mid-ingest"
    victim = launch(replica(tmp_path / "victim", database))
    acknowledged: dict[str, str] = {}  # event id → observation id the victim answered
    lock = threading.Lock()
    enough = threading.Event()
    streams = 4
    per_stream = 400

    def stream(k: int) -> None:
        with httpx.Client(timeout=10) as http:
            for n in range(k * per_stream, (k + 1) * per_stream):
                body = envelope(session, n)
                try:
                    response = http.post(f"{victim.url}/agentmemory/observe", json=body)
                except httpx.TransportError:
                    return  # the replica is gone: this event and the rest were never answered
                assert response.status_code == 201, response.text
                with lock:
                    acknowledged[body["eventId"]] = response.json()["observationId"]
                    if len(acknowledged) >= 150:
                        enough.set()

    threads = [threading.Thread(target=stream, args=(k,)) for k in range(streams)]
    for thread in threads:
        thread.start()
    assert enough.wait(60), "the replica never acknowledged 150 events"
    victim.kill()  # SIGKILL, with requests in flight on every stream
    for thread in threads:
        thread.join(30)
    total = streams * per_stream
    assert len(acknowledged) < total, "the replica was killed after the stream ended"

    kept = stored(database, session)
    assert set(acknowledged) <= set(kept)  # nothing acknowledged was lost
    assert all(count == 1 for count in kept.values())

    # The hook retries everything it did not see acknowledged, and some it did, on the other
    # replica: what the victim stored comes back deduplicated with its original ids.
    bulk_url = f"{replicas[0].url}/agentmemory/observe/bulk"
    retried: dict[str, dict] = {}
    with httpx.Client(timeout=60) as http:
        for first in range(0, total, 400):
            items = [envelope(session, n) for n in range(first, min(first + 400, total))]
            answer = http.post(bulk_url, json={"observations": items})
            assert answer.status_code == 200, answer.text
            assert answer.json()["failed"] == 0
            for item, result in zip(items, answer.json()["results"], strict=True):
                retried[item["eventId"]] = result
    for event_id, observation_id in acknowledged.items():
        assert retried[event_id] == {
            "deduplicated": True,
            "sessionId": session,
            "eventId": event_id,
            "observationId": observation_id,
        }
    for event_id in kept:
        assert retried[event_id].get("deduplicated") is True
    assert stored(database, session) == Counter({f"{session}-e{n}": 1 for n in range(total)})


def test_both_replicas_following_the_log_index_every_observation_once(replicas, database):
    """Both replicas' indexers follow the same log into the same index: it ends with one
    document per stored event and its cursor at the newest, never moved back."""
    session = "indexed-by-both"
    with httpx.Client(timeout=30) as http:
        for n in range(60):
            http.post(f"{replicas[n % 2].url}/agentmemory/observe", json=envelope(session, n))
    with psycopg.connect(database) as conn:
        (newest,) = conn.execute("SELECT max(seq) FROM events").fetchone()

    def caught_up():
        """the index cursor reached the newest event"""
        with psycopg.connect(database) as conn:
            row = conn.execute(
                "SELECT value FROM cursors WHERE name = 'index:observations'"
            ).fetchone()
        return row is not None and row[0] == newest

    wait_for(caught_up, timeout=30)
    with psycopg.connect(database) as conn:
        (events,) = conn.execute("SELECT count(*) FROM events").fetchone()
        documents, keys = conn.execute(
            "SELECT count(*), count(DISTINCT key) FROM documents WHERE kind = 'observation'"
        ).fetchone()
    assert documents == keys == events
