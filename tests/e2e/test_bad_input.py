"""Bad input gets a clear error naming the problem, never a 500, and nothing half-written."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from memvault import Memory
from memvault.jsontext import MAX_DEPTH, MAX_INT_DIGITS
from tests.helpers import envelope


def count(client) -> int:
    return client.get("/health").json()["store"]["events"]


@pytest.mark.parametrize(
    ("content", "status", "message"),
    [
        (b'{"hookType": "stop",', 400, "malformed JSON"),
        (b"", 400, "request body is empty"),
        (b"\xff\xfe\x00garbage", 400, "not valid UTF-8"),
        (b"[]", 400, "must be a JSON object, not list"),
        (b"42", 400, "must be a JSON object, not int"),
        (b"null", 400, "must be a JSON object, not null"),
        (b'{"hookType": "stop", "data": "\\ud800"}', 400, "not valid Unicode"),
        (b'{"hookType": "stop"}', 400, "sessionId: required"),
        (
            b'{"hookType": 1, "sessionId": "s", "project": "p", "cwd": "/", "timestamp": "t"}',
            400,
            "hookType: must be a string",
        ),
        (
            b'{"hookType": "stop", "sessionId": "", "project": "p", "cwd": "/", "timestamp": "t"}',
            400,
            "sessionId: must be a non-empty string",
        ),
    ],
)
def test_bad_bodies_are_refused_with_a_clear_error_and_nothing_written(
    client, content, status, message
):
    before = count(client)
    response = client.post("/observe", content=content)
    assert response.status_code == status
    assert message in response.json()["error"]
    assert count(client) == before


def test_missing_fields_are_each_named(client):
    response = client.post("/observe", json={"data": {}})
    assert response.status_code == 400
    assert set(response.json()["fields"]) == {
        "hookType",
        "sessionId",
        "project",
        "cwd",
        "timestamp",
    }


def test_an_unknown_hook_type_is_stored_not_rejected(client):
    sid = f"unk-{uuid.uuid4().hex[:6]}"
    response = client.post("/observe", json=envelope(sid, hookType="future_hook_kind"))
    assert response.status_code == 201
    (obs,) = client.get("/observations", params={"sessionId": sid}).json()["observations"]
    assert obs["hookType"] == "future_hook_kind" and obs["type"] == "other"


def test_ten_thousand_characters_of_cjk_are_stored_exactly(client, server):
    sid = f"cjk-{uuid.uuid4().hex[:6]}"
    text = ("記憶は失われない。" * 1200)[:10_000]
    body = envelope(sid, hookType="prompt_submit", data={"prompt": text})
    assert client.post("/observe", json=body).status_code == 201
    (obs,) = client.get("/observations", params={"sessionId": sid}).json()["observations"]
    assert obs["title"].startswith("Prompt: 記憶は失われない。")
    with Memory.open(home=server.home) as memory:
        assert memory.reads.events(sid)[0].payload["prompt"] == text


def test_an_oversized_body_is_413_whether_declared_or_streamed(start_server):
    server = start_server({"MEMVAULT_MAX_BODY_BYTES": "4096"})
    big = envelope(data={"prompt": "x" * 10_000})
    declared = httpx.post(f"{server.url}/agentmemory/observe", json=big)
    assert declared.status_code == 413
    assert "4096-byte limit" in declared.json()["error"]

    def chunks():
        for _ in range(10):
            yield b"x" * 1000

    streamed = httpx.post(f"{server.url}/agentmemory/observe", content=chunks())
    assert streamed.status_code == 413
    small = httpx.post(f"{server.url}/agentmemory/observe", json=envelope())
    assert small.status_code == 201
    assert httpx.get(f"{server.url}/agentmemory/health").json()["store"]["events"] == 1


def test_a_timestamp_out_of_range_is_stored_not_a_server_error(client):
    sid = f"ts-{uuid.uuid4().hex[:6]}"
    response = client.post("/observe", json=envelope(sid, timestamp="0001-01-01T00:00:00+01:00"))
    assert response.status_code == 201


def test_a_bulk_body_with_a_lone_surrogate_is_refused_whole_and_named(client):
    sid = f"bulk-{uuid.uuid4().hex[:6]}"
    body = (
        '{"observations": ['
        + ",".join(
            [
                json.dumps(envelope(sid, 1)),
                json.dumps(envelope(sid, 2)).replace('"2 passed"', '"\\ud800"'),
                json.dumps(envelope(sid, 3)),
            ]
        )
        + "]}"
    )
    response = client.post("/observe/bulk", content=body.encode())
    assert response.status_code == 400 and "not valid Unicode" in response.json()["error"]


# Every route that reads a JSON body: those that read it by hand, and those whose body
# FastAPI validates against a model. Each decodes it the same way.
BODY_ROUTES = [
    "/observe",
    "/observe/bulk",
    "/session/start",
    "/summarize",
    "/import",
    "/replay/import-jsonl",
    "/mcp/call",
    "/board/register",
    "/board/sessions/2026-01-01-0000-nobody/update",
    "/board/continue",
    "/board/release",
    "/board/sessions/2026-01-01-0000-nobody/archive",
    "/board/organize",
    "/board/trigger",
    "/search",
    "/smart-search",
    "/remember",
    "/forget",
    "/context",
    "/enrich",
]


def nested(levels: int) -> bytes:
    return b'{"query": ' + b"[" * levels + b"]" * levels + b"}"


BAD_BODIES = {
    "deeper-than-the-parser": (nested(5000), f"nested deeper than {MAX_DEPTH} levels"),
    "deeper-than-the-limit": (nested(MAX_DEPTH), f"nested deeper than {MAX_DEPTH} levels"),
    "huge-integer": (b'{"query": 1' + b"0" * 5000 + b"}", f"at most {MAX_INT_DIGITS} digits"),
    "not-utf8": (b'{"query": "\xff"}', "not valid UTF-8"),
    "malformed": (b'{"query": ', "malformed JSON"),
    "lone-surrogate": (b'{"query": "a\\ud800"}', "query holds a lone surrogate"),
    "infinity": (b'{"query": 1e999}', "beyond the range of a double"),
}


def written(client) -> tuple[int, int]:
    board = client.get("/board/sessions").json()["sessions"]
    return count(client), len(board)


@pytest.mark.parametrize("kind", BAD_BODIES)
@pytest.mark.parametrize("route", BODY_ROUTES)
def test_every_body_route_refuses_an_unreadable_body_with_the_same_clear_400(client, route, kind):
    content, message = BAD_BODIES[kind]
    before = written(client)
    response = client.post(route, content=content, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert message in response.json()["error"]
    assert written(client) == before


def test_a_lone_surrogate_in_a_board_topic_is_a_400_naming_the_field(client):
    before = written(client)
    response = client.post(
        "/board/register",
        content=b'{"topic": "plan \\ud83d", "manual": true, "snapshot": "# Topic"}',
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["fields"] == ["topic"]
    assert "topic holds a lone surrogate" in response.json()["error"]
    assert written(client) == before


def test_a_model_route_names_its_bad_fields_as_observe_does(client):
    response = client.post("/search", json={"query": "", "limit": 1000})
    assert response.status_code == 400
    assert set(response.json()["fields"]) == {"query", "limit"}


def test_json_as_deep_as_the_limit_is_stored_and_redacted_whole(client, server):
    sid = f"deep-{uuid.uuid4().hex[:6]}"
    data: object = {"note": "password=hunter2hunter2"}  # a secret: redaction walks it all
    for _ in range(MAX_DEPTH - 2):  # the envelope is one level, the innermost object one
        data = [data]
    response = client.post("/observe", json=envelope(sid, data=data))
    assert response.status_code == 201, response.text
    with Memory.open(home=server.home) as memory:
        (event,) = memory.reads.events(sid)
    stored = event.payload
    for _ in range(MAX_DEPTH - 2):
        (stored,) = stored
    assert stored == {"note": "password=[REDACTED:secret]"}


def test_an_integer_as_long_as_the_limit_is_stored_exactly(client, server):
    sid = f"long-{uuid.uuid4().hex[:6]}"
    number = int("7" * MAX_INT_DIGITS)
    body = json.dumps(envelope(sid, data={"count": number}))
    assert client.post("/observe", content=body.encode()).status_code == 201
    with Memory.open(home=server.home) as memory:
        (event,) = memory.reads.events(sid)
    assert event.payload == {"count": number}


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/sessions", {"offset": 2**63}),
        ("/sessions", {"limit": 2**63}),
        ("/observations", {"sessionId": "s", "offset": 2**63}),
        ("/memories", {"offset": 2**63}),
        ("/memories", {"offset": -1}),
        ("/projects/demo/memory", {"limit": 2**64}),
    ],
)
def test_a_query_number_out_of_range_is_a_400_naming_the_parameter(client, path, params):
    response = client.get(path, params=params)
    assert response.status_code == 400, response.text
    (name,) = params.keys() - {"sessionId"}
    assert response.json()["fields"] == [name]


@pytest.mark.parametrize("days", [0, 10**9, 10**10])
def test_stale_days_out_of_range_is_a_400_naming_it_and_the_board_is_untouched(client, days):
    before = client.get("/board/sessions").json()
    response = client.post("/board/organize", json={"staleDays": days})
    assert response.status_code == 400, response.text
    assert response.json()["fields"] == ["staleDays"]
    assert client.get("/board/sessions").json() == before


def test_no_request_in_this_module_caused_a_server_error(server):
    """Last in the module, so it sees every request the others sent."""
    assert "Traceback" not in server.log()
