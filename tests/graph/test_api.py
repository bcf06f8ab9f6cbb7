"""The graph routes against a real server: query, stats, reset."""

from __future__ import annotations

import time

import httpx
import pytest

from memvault.pipeline.graph_job import extract_session_graph
from memvault.store.sqlite import SQLiteStore
from tests.helpers import Server
from tests.pipeline.sessions import CHINESE, conversation


def start(home):
    """A server whose store holds the graph of one session (``zh``)."""
    server = Server(home).start()
    envelopes = conversation("zh", CHINESE)
    httpx.post(
        f"{server.url}/agentmemory/observe/bulk", json={"observations": envelopes}, timeout=10
    ).raise_for_status()
    extract(server)
    return server


def extract(server):
    store = SQLiteStore(server.home / "memvault.db")
    try:
        while extract_session_graph(store, "zh", limit=100):
            pass
    finally:
        store.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = start(tmp_path_factory.mktemp("graph") / "home")
    yield running
    running.stop()


@pytest.fixture
def client(server):
    with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=10) as http:
        yield http


def test_stats_count_nodes_by_type_and_edges_by_relation(client):
    answer = client.get("/graph/stats").json()

    assert answer["success"] is True
    assert answer["nodesByType"] == {"decision": 1, "error": 1, "file": 1}
    assert answer["edgesByType"]["fixes"] == 2 and answer["edgesByType"]["causes"] == 1
    assert answer["totalNodes"] == 3
    assert answer["totalEdges"] == sum(answer["edgesByType"].values())


def test_a_name_query_answers_in_agentmemorys_node_shape(client):
    answer = client.post("/graph/query", json={"query": "deploy"}).json()

    assert answer["success"] is True and answer["truncated"] is False
    (node,) = answer["nodes"]
    assert node["id"] == "file:scripts/deploy.sh"
    assert node["type"] == "file" and node["name"] == "scripts/deploy.sh"
    # Two observations name it, and the pitfall fragment the turn end led to names it too.
    sources = node["sourceObservationIds"]
    assert node["properties"]["mentions"] == len(sources) >= 2
    assert node["properties"]["lastSeen"] >= node["properties"]["firstSeen"] == node["createdAt"]
    assert sum(s.startswith("obs_") for s in sources) == 2


def test_a_walk_returns_the_nodes_it_reached_and_the_edges_among_them(client):
    answer = client.post(
        "/graph/query", json={"startNodeId": "file:scripts/deploy.sh", "maxDepth": 1}
    ).json()

    reached = {n["id"] for n in answer["nodes"]}
    assert "error:rsync: command not found" in reached and answer["depth"] == 1
    assert {(e["type"], e["targetNodeId"]) for e in answer["edges"]} >= {
        ("causes", "error:rsync: command not found"),
        ("fixes", "error:rsync: command not found"),
    }
    for edge in answer["edges"]:
        assert {edge["sourceNodeId"], edge["targetNodeId"]} <= reached
        assert edge["weight"] >= 1 and edge["id"].endswith(f"|{edge['type']}")


def test_node_type_keeps_one_type(client):
    answer = client.post("/graph/query", json={"nodeType": "decision"}).json()

    assert [n["type"] for n in answer["nodes"]] == ["decision"]
    assert answer["edges"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"nodeType": "planet"}, "nodeType"),
        ({"limit": 500}, "limit"),
        ({"maxDepth": 9}, "maxDepth"),
        ({"offset": -1}, "offset"),
    ],
)
def test_a_bad_query_answers_400_naming_the_field(client, body, field):
    response = client.post("/graph/query", json=body)

    assert response.status_code == 400
    assert response.json()["error"].startswith(f"{field}: ")


def test_reset_empties_the_graph_until_it_is_extracted_again(tmp_path):
    server = start(tmp_path / "home")
    try:
        with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=10) as client:
            held = client.get("/graph/stats").json()
            assert watermark(client) is not None
            answer = client.post("/graph/reset").json()

            assert answer == {
                "success": True,
                "cleared": {k: v for k, v in held.items() if k != "success"},
            }
            assert client.get("/graph/stats").json()["totalNodes"] == 0
            assert client.post("/graph/query", json={"query": "deploy"}).json()["nodes"] == []
            assert watermark(client) is None

            extract(server)
            assert client.get("/graph/stats").json() == held
    finally:
        server.stop()


def watermark(client):
    (session,) = client.get("/sessions").json()["sessions"]
    return session["watermarks"]["graphExtracted"]


def test_reset_queues_the_fragments_to_be_read_again(tmp_path):
    server = Server(tmp_path / "home").start()
    try:
        with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=10) as client:
            client.post(
                "/remember",
                json={
                    "project": "demo-app",
                    "summary": "The deploy script needs scp on CI",
                    "files": ["scripts/deploy.sh"],
                    "concepts": ["deploy"],
                },
            ).raise_for_status()
            assert file_node(client) is not None

            assert client.post("/graph/reset").json()["success"] is True

            deadline = time.monotonic() + 20
            while file_node(client) is None and time.monotonic() < deadline:
                time.sleep(0.1)
            assert file_node(client)["properties"]["mentions"] == 1
    finally:
        server.stop()


def file_node(client):
    found = client.post("/graph/query", json={"startNodeId": "file:scripts/deploy.sh"}).json()
    return found["nodes"][0] if found["nodes"] else None


def test_a_query_holding_a_nul_character_is_refused_naming_it_not_a_server_error(server):
    # The one rule for what no store can hold: refused by name, alike on both engines.
    answer = httpx.post(
        f"{server.url}/agentmemory/graph/query", json={"query": "abc\u0000"}, timeout=10
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["fields"] == ["query"]


def test_a_graph_query_body_that_is_not_utf8_is_the_same_clear_400_as_observe(server):
    answer = httpx.post(
        f"{server.url}/agentmemory/graph/query",
        content=b'{"query": "caf\xe9"}',
        headers={"content-type": "application/json"},
        timeout=10,
    )
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("request body is not valid UTF-8")
