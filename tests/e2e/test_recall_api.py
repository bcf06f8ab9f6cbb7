"""Retrieval over REST against a real server: search, remember, the layers, context."""

from __future__ import annotations

import time
import uuid

import pytest


@pytest.fixture
def project():
    return f"proj-{uuid.uuid4().hex[:8]}"


def eventually(check, timeout=5.0):
    """The server indexes in the background: wait (briefly) for ``check`` to hold."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_search_returns_the_documented_shape_with_client_event_ids(client, project):
    sid = f"s-{project}"
    client.post(
        "/observe",
        json={
            "hookType": "prompt_submit",
            "sessionId": sid,
            "project": project,
            "cwd": "/c",
            "timestamp": "2026-11-30T10:00:00Z",
            "eventId": "turn-7",
            "data": {"prompt": f"why does {project} leak file handles"},
        },
    )

    def found():
        body = {"query": "leak file handles", "project": project, "kinds": ["observation"]}
        return client.post("/search", json=body).json()["results"]

    (hit,) = eventually(found)
    assert hit["kind"] == "observation" and hit["id"].startswith("obs_")
    assert hit["eventIds"] == ["turn-7"]
    for key in ("title", "summary", "score", "relevance", "importance", "recency"):
        assert key in hit
    assert 0 <= hit["relevance"] <= 1


def test_remember_then_search_get_and_project_memory(client, project):
    created = client.post(
        "/remember",
        json={
            "project": project,
            "summary": "The billing service retries three times",
            "facts": ["retries: 3", "backoff: exponential"],
            "importance": 0.8,
            "type": "decision",
        },
    )
    assert created.status_code == 201
    memory = created.json()["memory"]
    assert memory["kind"] == "fragment" and "decision" in memory["tags"]
    results = client.post("/search", json={"query": "billing retries", "project": project}).json()[
        "results"
    ]
    assert results[0]["id"] == memory["id"]
    assert results[0]["path"].startswith("agent-memory/")
    l1 = client.get(f"/fragments/{memory['id']}").json()["memory"]
    assert "backoff: exponential" in l1["body"]
    assert client.get(f"/memories/{memory['id']}").json()["memory"]["id"] == memory["id"]
    l2 = client.get(f"/projects/{project}/memory").json()
    assert l2["total"] == 1 and l2["fragments"][0]["id"] == memory["id"]
    listed = client.get("/memories", params={"project": project}).json()["memories"]
    assert [m["id"] for m in listed] == [memory["id"]]


def test_remember_merges_a_near_duplicate(client, project):
    body = {"project": project, "summary": "Use pnpm for installs", "facts": ["pm: pnpm"]}
    first = client.post("/remember", json=body).json()
    again = client.post("/remember", json={**body, "facts": ["pm: pnpm", "lockfile: pnpm-lock"]})
    assert again.status_code == 200
    assert again.json()["action"] == "merged"
    assert again.json()["similarTo"] == first["memory"]["id"]


def test_remember_refuses_forbidden_fields_and_wikilinks_with_a_named_error(client, project):
    response = client.post(
        "/remember",
        json={"project": project, "summary": "see [[Other note]]", "facts": ["a: b"]},
    )
    assert response.status_code == 400 and "wikilinks" in response.json()["error"]
    missing = client.post("/remember", json={"summary": "no project", "facts": ["a: b"]})
    assert missing.status_code == 400 and "project" in missing.json()["error"]


def test_forget_a_fragment(client, project):
    created = client.post(
        "/remember", json={"project": project, "summary": "temporary", "facts": ["t: 1"]}
    ).json()
    forgotten = client.post("/forget", json={"memoryId": created["memory"]["id"]})
    assert forgotten.status_code == 200
    assert client.get(f"/fragments/{created['memory']['id']}").status_code == 404
    refused = client.post("/forget", json={"observationIds": ["obs_1"]})
    assert refused.status_code == 400 and "immutable" in refused.json()["error"]


def test_context_and_enrich_answer_with_a_context_string(client, project):
    client.post(
        "/remember",
        json={"project": project, "summary": "auth.py checks tokens twice", "facts": ["a: b"]},
    )
    context = client.post("/context", json={"project": project, "budget": 500}).json()
    assert context["context"].startswith("📖 agent memory：讀取 1 個碎片")
    assert context["tokens"] <= 500
    enriched = client.post("/enrich", json={"files": ["src/auth.py"], "project": project}).json()
    assert "tokens twice" in enriched["context"]


def test_session_start_injects_the_projects_memory(client, project):
    client.post(
        "/remember",
        json={"project": project, "summary": "staging uses port 8443", "facts": ["port: 8443"]},
    )
    started = client.post(
        "/session/start", json={"sessionId": f"start-{project}", "project": project, "cwd": "/c"}
    ).json()
    assert "staging uses port 8443" in started["context"]


@pytest.mark.parametrize(
    ("path", "body", "named"),
    [
        ("/search", {}, "query"),
        ("/search", {"query": "x", "kinds": ["memo"]}, "kinds"),
        ("/search", {"query": "x", "limit": 1000}, "limit"),
        ("/context", {"budget": 5}, "budget"),
        ("/enrich", {"files": []}, "files"),
        ("/smart-search", {}, "query"),
    ],
)
def test_bad_retrieval_requests_name_the_problem(client, path, body, named):
    response = client.post(path, json=body)
    assert response.status_code == 400
    assert named in response.json()["error"]


def test_a_hand_edit_is_searchable_within_two_seconds_and_the_edit_wins(client, server, project):
    created = client.post(
        "/remember",
        json={
            "project": project,
            "summary": "which message broker we use",
            "facts": ["broker: rabbitmq"],
        },
    ).json()
    path = server.home / "vault" / created["memory"]["path"]
    path.write_text(path.read_text().replace("rabbitmq", "nats"))

    def search(word):
        body = {"query": word, "project": project, "kinds": ["fragment"]}
        return client.post("/search", json=body).json()["results"]

    started = time.monotonic()
    assert eventually(lambda: search("NATS"), timeout=2.0)
    assert time.monotonic() - started < 2.0
    assert not search("rabbitmq")


def test_a_fragment_keeps_the_events_it_was_learned_from_across_merges(client, project):
    body = {"project": project, "summary": "Retry uploads twice", "facts": ["retries: 2"]}
    client.post("/remember", json={**body, "eventIds": ["ev-1", "ev-2"]})
    merged = client.post("/remember", json={**body, "eventIds": ["ev-2", "ev-3"]}).json()
    assert merged["action"] == "merged"
    results = client.post(
        "/search", json={"query": "retry uploads", "project": project, "kinds": ["fragment"]}
    ).json()["results"]
    assert results[0]["eventIds"] == ["ev-1", "ev-2", "ev-3"]
