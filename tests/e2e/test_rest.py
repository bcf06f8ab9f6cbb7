"""The agentmemory-compatible REST API, against a real server process."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.helpers import envelope


@pytest.fixture
def sid():
    return f"rest-{uuid.uuid4().hex[:8]}"


def test_observe_returns_201_with_the_observation_id(client, sid):
    response = client.post("/observe", json=envelope(sid, 1))
    assert response.status_code == 201
    body = response.json()
    assert body["observationId"].startswith("obs_")
    (observation,) = client.get("/observations", params={"sessionId": sid}).json()["observations"]
    assert observation["id"] == body["observationId"]
    assert observation["title"] == "Bash: npm test -- case1"
    assert observation["type"] == "command_run"
    assert observation["eventId"] == f"{sid}-e1"


def test_a_repeated_event_id_answers_deduplicated_with_the_original_ids(client, sid):
    first = client.post("/observe", json=envelope(sid, 1)).json()
    again = client.post("/observe", json=envelope(sid, 1))
    assert again.status_code == 201
    assert again.json() == {
        "deduplicated": True,
        "sessionId": sid,
        "eventId": f"{sid}-e1",
        "observationId": first["observationId"],
    }
    assert len(client.get("/observations", params={"sessionId": sid}).json()["observations"]) == 1


def test_bulk_reports_each_item_and_one_bad_item_fails_alone(client, sid):
    items = [envelope(sid, i) for i in range(5)]
    items[2] = {**items[2], "sessionId": ""}
    items[4] = envelope(sid, 0)  # a duplicate of the first
    body = client.post("/observe/bulk", json={"observations": items}).json()
    assert {k: body[k] for k in ("success", "total", "imported", "deduplicated", "failed")} == {
        "success": True,
        "total": 5,
        "imported": 3,
        "deduplicated": 1,
        "failed": 1,
    }
    assert body["errors"] == [
        {
            "index": 2,
            "eventId": f"{sid}-e2",
            "error": "observations[2].sessionId: must be a non-empty string",
        }
    ]
    assert body["results"][2] is None
    assert body["results"][4]["deduplicated"] is True
    stored = client.get("/observations", params={"sessionId": sid}).json()["observations"]
    assert [o["eventId"] for o in stored] == [f"{sid}-e0", f"{sid}-e1", f"{sid}-e3"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"observations": []}, "must hold 1 to 500 items, got 0"),
        ({"observations": [{}] * 501}, "must hold 1 to 500 items, got 501"),
        ({"observations": "nope"}, "observations: required, an array"),
        ({}, "observations: required"),
        ([1, 2], "body must be a JSON object"),
    ],
)
def test_bulk_refuses_a_malformed_batch_whole(client, body, message):
    response = client.post("/observe/bulk", json=body)
    assert response.status_code == 400
    assert message in response.json()["error"]


def test_session_start_creates_the_session_and_returns_it_with_context(client, sid):
    response = client.post(
        "/session/start", json={"sessionId": sid, "project": "p", "cwd": "/p", "agentId": "cursor"}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["session"]["id"] == sid and body["session"]["agentId"] == "cursor"
    assert isinstance(body["context"], str)
    assert any(s["id"] == sid for s in client.get("/sessions").json()["sessions"])


def test_session_end_is_a_noop_and_later_events_are_still_accepted(client, sid):
    client.post("/observe", json=envelope(sid, 1))
    assert client.post("/session/end", json={"sessionId": sid}).json() == {
        "success": True,
        "noop": True,
    }
    assert client.post("/session/end", content=b"not even json").status_code == 200
    assert client.post("/observe", json=envelope(sid, 2)).status_code == 201
    session = next(s for s in client.get("/sessions").json()["sessions"] if s["id"] == sid)
    assert session["status"] == "active" and session["observationCount"] == 2


def test_sessions_lists_with_agentmemory_fields(client, sid):
    client.post("/observe", json=envelope(sid, 1, agentId="claude-code"))
    sessions = client.get("/sessions", params={"agentId": "claude-code"}).json()["sessions"]
    session = next(s for s in sessions if s["id"] == sid)
    for key in ("project", "cwd", "startedAt", "status", "observationCount", "watermarks"):
        assert key in session
    assert session["watermarks"]["summarized"] is None


def test_observations_come_back_in_event_order(client, sid):
    for n in (30, 10, 20):
        client.post("/observe", json=envelope(sid, n))
    listed = client.get("/observations", params={"sessionId": sid}).json()["observations"]
    assert [o["eventId"] for o in listed] == [f"{sid}-e10", f"{sid}-e20", f"{sid}-e30"]
    page = client.get("/observations", params={"sessionId": sid, "limit": 1, "offset": 2})
    assert [o["eventId"] for o in page.json()["observations"]] == [f"{sid}-e30"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "sessionId"),
        ({"sessionId": "s", "limit": 0}, "limit"),
        ({"sessionId": "s", "limit": 10**6}, "limit"),
        ({"sessionId": "s", "offset": -1}, "offset"),
    ],
)
def test_observation_queries_are_bounded_and_bad_ones_named(client, params, message):
    response = client.get("/observations", params=params)
    assert response.status_code == 400
    assert message in response.json()["error"]


def test_livez_and_health(client):
    assert client.get("/livez").json()["status"] == "ok"
    health = client.get("/health").json()
    assert health["status"] == "ok"
    assert health["store"]["engine"] == "sqlite" and health["store"]["sizeBytes"] > 0
    assert health["queue"]["pendingWrites"] >= 0 and health["queue"]["jobsPending"] == 0
    assert health["process"]["rssBytes"] > 0


def test_the_openapi_document_and_docs_are_served(server):
    spec = httpx.get(f"{server.url}/openapi.json").json()
    for path in ("/agentmemory/observe", "/agentmemory/observe/bulk", "/agentmemory/health"):
        assert path in spec["paths"]
    observe = spec["paths"]["/agentmemory/observe"]["post"]
    schema = observe["requestBody"]["content"]["application/json"]["schema"]
    assert {"hookType", "sessionId", "project", "cwd", "timestamp"} <= set(schema["required"])
    assert httpx.get(f"{server.url}/docs").status_code == 200


def test_an_unknown_route_is_a_json_404(client):
    response = client.get("/no-such-route")
    assert response.status_code == 404
    assert "error" in response.json()
