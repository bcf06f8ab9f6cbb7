"""``GET /agentmemory/export`` and ``POST /agentmemory/import`` on real servers."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.archive.test_agentmemory import export_data
from tests.helpers import Server, envelope, wait_for


@pytest.fixture
def servers(tmp_path):
    started: list[Server] = []

    def start(name: str, env: dict[str, str] | None = None) -> httpx.Client:
        server = Server(tmp_path / name, env).start()
        started.append(server)
        return httpx.Client(base_url=f"{server.url}/agentmemory", timeout=30)

    yield start
    for server in started:
        server.stop()


def test_export_streams_the_archive_and_import_takes_it_into_another_server(servers):
    source, target = servers("source"), servers("target")
    source.post("/session/start", json={"sessionId": "s1", "project": "demo-app", "cwd": "/c"})
    assert source.post(
        "/observe/bulk", json={"observations": [envelope("s1", n) for n in range(3)]}
    )
    source.post("/remember", json={"project": "demo-app", "content": "- deploy: CI only"})
    board = source.get("/board/sessions").json()["sessions"]
    assert len(board) == 1

    with source.stream("GET", "/export", params={"includeEvents": "true"}) as response:
        body = b"".join(response.iter_bytes())
    records = [json.loads(line) for line in body.splitlines()]
    answer = target.post("/import", json={"exportData": records})

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    disposition = response.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="memvault-export-')
    assert disposition.endswith('.ndjson"')
    assert records[0]["format"] == "memvault-export"
    assert [r.get("kind") for r in records].count("event") == 3
    assert answer.status_code == 200, answer.text
    shown = answer.json()
    assert shown["success"] is True and shown["strategy"] == "merge"
    assert (shown["sessions"], shown["observations"], shown["memories"]) == (1, 3, 1)
    assert shown["report"]["complete"] is True
    events = target.get("/observations", params={"sessionId": "s1"}).json()["observations"]
    assert len(events) == 3
    again = target.post("/import", json={"exportData": body.decode(), "strategy": "skip"}).json()
    assert (again["sessions"], again["observations"], again["memories"]) == (0, 0, 0)
    assert again["skipped"] == 6  # 1 session, 3 events, 1 fragment, 1 board row

    def summarized():
        """the target's worker summarized the imported session onto its board row"""
        (row,) = target.get("/board/sessions").json()["sessions"]
        return row["sessionId"] == board[0]["sessionId"] and row["status"] == "active"

    wait_for(summarized, timeout=30)


def test_export_leaves_events_out_unless_asked(servers):
    client = servers("home")
    client.post("/observe", json=envelope("s1", 0))

    records = [json.loads(line) for line in client.get("/export").text.splitlines()]

    assert records[0]["includes"] == {"events": False}
    kinds = [r["kind"] for r in records[1:]]
    assert "event" not in kinds and kinds[0] == "session" and kinds[-1] == "end"


def test_import_takes_agentmemorys_export_data(servers):
    client = servers("home")

    answer = client.post("/import", json={"exportData": export_data(), "strategy": "merge"})

    assert answer.status_code == 200, answer.text
    shown = answer.json()
    assert (shown["sessions"], shown["observations"], shown["memories"]) == (2, 2, 2)
    assert shown["report"]["source"] == "agentmemory"
    assert shown["report"]["counts"]["observation"]["skipped"] == 5


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"exportData": {"version": "0.1.0", "sessions": []}}, "unsupported agentmemory"),
        ({"exportData": [{"format": "memvault-export", "version": 3}]}, "version 3"),
        ({"exportData": "not an archive"}, "header"),
        ({"exportData": None}, "exportData is required"),
        ({"exportData": [], "strategy": "wipe"}, "strategy"),
    ],
)
def test_bad_input_is_a_400_naming_the_problem(servers, body, message):
    client = servers("home")

    answer = client.post("/import", json=body)

    assert answer.status_code == 400
    assert answer.json()["success"] is False
    assert message in answer.json()["error"]
    assert client.get("/sessions").json()["sessions"] == []


def test_an_import_larger_than_the_body_limit_is_refused(servers):
    client = servers("home", env={"MEMVAULT_MAX_BODY_BYTES": "4096"})
    records = [{"format": "memvault-export", "version": 1}]
    records += [
        {"kind": "fragment", "path": f"p - 2026-11-01 - {n}.md", "text": "x" * 100}
        for n in range(60)
    ]

    answer = client.post("/import", json={"exportData": records})

    assert answer.status_code == 413
