"""While the board's folder cannot be written, a host starting a session still gets its
memory: ``POST /session/start`` answers 200 with the memory block and ``memorySessionId:
null`` (the session is kept in the database), as docs/api.md promises.

The folder is made read-only with a read-only bind mount of itself (tests run as root,
who ignores a chmod), the same way the other fault tests do (``tests/store/faults.py``)."""

from __future__ import annotations

import httpx

from tests.store.faults import read_only


def test_a_session_starts_with_its_memory_while_the_board_cannot_be_written(start_server):
    server = start_server()
    with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=120) as client:
        remembered = client.post(
            "/remember",
            json={"project": "ro-app", "content": "Deploys of ro-app go through the canary."},
        )
        assert remembered.status_code == 201, remembered.text
        memory_folder = server.home / "vault" / "memory"
        memory_folder.mkdir(parents=True, exist_ok=True)
        with read_only(memory_folder):
            started = client.post(
                "/session/start", json={"sessionId": "ro-1", "project": "ro-app", "cwd": "/ro"}
            )
            assert started.status_code == 200, started.text
            body = started.json()
            assert body["memorySessionId"] is None
            assert "canary" in body["context"]
            assert "Memory Session ID" not in body["context"]
            assert body["session"]["id"] == "ro-1"
        kept = client.get("/sessions").json()["sessions"]
        assert [s["id"] for s in kept] == ["ro-1"]
        assert "cannot be written" in server.log()
        again = client.post(
            "/session/start", json={"sessionId": "ro-1", "project": "ro-app", "cwd": "/ro"}
        )
        assert again.status_code == 200 and again.json()["memorySessionId"], again.text
