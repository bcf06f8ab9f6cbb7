"""One rule for what a store cannot hold: text holding U+0000 is refused by name with a
400 at every route, on SQLite and PostgreSQL alike, rather than stored on one engine and a
503 or 500 on the other. An event's ``data`` may hold it (kept as JSON text, escaped)."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.helpers import IN_CI, envelope

NUL = "a\u0000b"


@pytest.fixture(params=["sqlite", "postgres"], scope="module")
def client(request, tmp_path_factory):
    from tests.helpers import Server

    env: dict[str, str] = {}
    if request.param == "postgres":
        if not IN_CI:
            pytest.importorskip("psycopg", reason="the postgres extra is not installed")
        cluster = request.getfixturevalue("postgres_cluster")
        env["MEMVAULT_STORE_URL"] = cluster.database()
    running = Server(tmp_path_factory.mktemp(request.param) / "home", env).start()
    try:
        with httpx.Client(base_url=f"{running.url}/agentmemory", timeout=30) as http:
            yield http
    finally:
        running.stop()


def refused(answer: httpx.Response, field: str) -> None:
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["fields"] == [field], body
    assert "NUL character (U+0000)" in body["error"], body


@pytest.mark.parametrize(
    "field", ["sessionId", "eventId", "project", "cwd", "agentId", "hookType", "timestamp"]
)
def test_an_event_field_holding_nul_is_refused_naming_it(client, field):
    refused(client.post("/observe", json=envelope("nul-1", 1, **{field: NUL})), field)


def test_an_event_whose_data_holds_nul_is_stored(client):
    answer = client.post("/observe", json=envelope("nul-data", 1, data={"out": NUL}))
    assert answer.status_code == 201, answer.text
    events = client.get("/observations", params={"sessionId": "nul-data"}).json()
    assert len(events["observations"]) == 1


def test_in_a_bulk_request_the_item_holding_nul_fails_alone(client):
    items = [envelope("nul-bulk", 1, cwd=NUL), envelope("nul-bulk", 2)]
    answer = client.post("/observe/bulk", json={"observations": items})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["imported"], body["failed"]) == (1, 1), body
    assert "NUL character" in body["errors"][0]["error"]


def test_a_query_parameter_holding_nul_is_refused_naming_it(client):
    refused(client.get("/observations?sessionId=a%00b"), "sessionId")
    refused(client.get("/search?query=x%00&limit=5"), "query")
    refused(client.get("/sessions?project=%00"), "project")


def test_a_path_holding_nul_is_refused(client):
    refused(client.get("/fragments/a%00b"), "path")
    refused(client.delete("/fragments/a%00b"), "path")


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("/session/start", {"sessionId": NUL, "project": "p", "cwd": "/c"}, "sessionId"),
        ("/remember", {"content": f"use {NUL}", "project": "p"}, "content"),
        ("/board/register", {"agentName": "agent-one", "topic": NUL}, "topic"),
        (
            "/board/register",
            {"agentName": "agent-one", "sections": {"Next Actions": ["x", NUL]}},
            "sections.Next Actions.1",
        ),
        ("/mcp/call", {"name": "memory_save", "arguments": {"content": NUL}}, "arguments.content"),
        ("/replay/import-jsonl", {"path": NUL}, "path"),
        (
            "/import",
            {"exportData": {"version": "0.9.29", "sessions": [{"id": NUL}], "memories": []}},
            "exportData.sessions.0.id",
        ),
    ],
)
def test_a_body_holding_nul_is_refused_naming_the_field(client, route, body, field):
    answer = client.post(route, json=body)
    assert answer.status_code == 400, answer.text
    assert field in answer.text and "NUL character" in answer.text, answer.text


def test_an_archive_whose_records_hold_nul_imports_the_rest_and_names_them(client):
    header = {"format": "memvault-export", "version": 1, "exportedAt": "2026-11-30T10:00:00Z",
              "memvaultVersion": "0", "includes": {"events": True}}  # fmt: skip
    good = {"kind": "event", **envelope("nul-archive", 1)}
    bad_event = {"kind": "event", **envelope(NUL, 2)}
    bad_session = {"kind": "session", "id": NUL, "project": "p", "cwd": "/c"}
    lines = [header, bad_session, bad_event, good, {"kind": "end", "records": {}}]
    body = "\n".join(json.dumps(line) for line in lines).encode()
    answer = client.post("/import/archive", content=body)
    assert answer.status_code == 200, answer.text
    assert "NUL character" in answer.text
    stored = client.get("/observations", params={"sessionId": "nul-archive"}).json()
    assert len(stored["observations"]) == 1


def test_an_agentmemory_export_holding_nul_imports_the_rest(client):
    export = {
        "version": "0.9.29",
        "sessions": [{"id": NUL, "project": "p", "cwd": "/c"}],
        "memories": [
            {"id": NUL, "title": f"Bad {NUL}", "content": f"x{NUL}y", "project": "p"},
            {"id": "m-good", "title": "Plain memory", "content": "Deploys use the canary."},
        ],
    }
    answer = client.post("/import/archive", content=json.dumps(export).encode())
    assert answer.status_code == 200, answer.text
    assert "NUL character" in answer.text
