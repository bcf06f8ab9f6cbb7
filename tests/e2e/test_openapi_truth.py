"""The served OpenAPI document tells the truth: a real server is driven through every
operation with the request bodies the document gives as examples (and ids made first for
the routes that take them), and each real answer's status, media type and body are
validated against what the document declares for it; so are bad requests' 400s and the
guards' answers. Every error refers to the one ``Error`` schema."""

from __future__ import annotations

import json
import shutil
from typing import Any
from urllib.parse import quote

import httpx
import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tests.helpers import Server, envelope, fixtures_dir, wait_for

DOCUMENT_URI = "urn:memvault:openapi"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("truth")
    # The transcript import only reads under the server user's home: give it one.
    transcripts = root / "user" / "transcripts"
    transcripts.mkdir(parents=True)
    shutil.copy(fixtures_dir() / "claude-code" / "transcripts" / "short.jsonl", transcripts)
    running = Server(root / "home", {"HOME": str(root / "user")}).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def document(served) -> dict[str, Any]:
    return httpx.get(f"{served.url}/openapi.json").json()


@pytest.fixture(scope="module")
def http(served):
    with httpx.Client(base_url=served.url, timeout=30) as client:
        yield client


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def declared(document: dict[str, Any], method: str, path: str, status: int) -> dict[str, Any]:
    """The answer the document declares for ``method path`` with ``status``."""
    operation = document["paths"][path][method.lower()]
    answers = operation["responses"]
    assert str(status) in answers, f"{method} {path} answered {status}, not declared"
    return answers[str(status)]


def check_answer(document: dict[str, Any], method: str, path: str, answer: httpx.Response):
    """Fail unless ``answer`` is one ``method path`` declares: its status, its media type,
    and a body the declared schema validates."""
    media = answer.headers.get("content-type", "").split(";")[0].strip()
    content = declared(document, method, path, answer.status_code).get("content", {})
    assert media in content, f"{method} {path} {answer.status_code}: {media} not declared"
    schema = content[media].get("schema")
    if f"{method} {path} {answer.status_code}" in UNDECLARED:
        return
    assert schema, f"{method} {path} {answer.status_code}: no schema for {media}"
    if media != "application/json":
        return
    where = _pointer(
        "paths", path, method.lower(), "responses", str(answer.status_code), "content", media
    )
    registry = Registry().with_resource(
        DOCUMENT_URI, Resource(contents=document, specification=DRAFT202012)
    )
    validator = jsonschema.Draft202012Validator(
        {"$ref": f"{DOCUMENT_URI}#/{where}/schema"}, registry=registry
    )
    errors = sorted(validator.iter_errors(answer.json()), key=lambda e: list(e.path))
    assert not errors, f"{method} {path} {answer.status_code}: " + "; ".join(
        f"{'/'.join(map(str, e.path)) or '(body)'}: {e.message}"[:400] for e in errors[:5]
    )


def example(document: dict[str, Any], method: str, path: str, n: int = 0) -> Any:
    """The ``n``-th example the document gives for the operation's request body."""
    body = document["paths"][path][method.lower()]["requestBody"]
    schema = body["content"]["application/json"]["schema"]
    for part in schema.get("anyOf", [schema]):  # an optional body: the model or null
        if "$ref" in part:
            part = document["components"]["schemas"][part["$ref"].rsplit("/", 1)[1]]
        if part.get("examples"):
            return part["examples"][n]
    pytest.fail(f"{method} {path}: its request body has no example")


class Driver:
    """Calls operations and checks each answer against the document."""

    def __init__(self, http: httpx.Client, document: dict[str, Any]) -> None:
        self.http = http
        self.document = document
        self.reached: set[str] = set()
        self.families: set[str] = set()

    def __call__(
        self,
        method: str,
        path: str,
        *,
        ids: dict[str, str] | None = None,
        expect: int | tuple[int, ...] = 200,
        **kwargs: Any,
    ) -> Any:
        url = path.format(**{k: quote(v, safe="/") for k, v in (ids or {}).items()})
        answer = self.http.request(method, url, **kwargs)
        statuses = expect if isinstance(expect, tuple) else (expect,)
        assert answer.status_code in statuses, f"{method} {url}: {answer.text[:500]}"
        check_answer(self.document, method, path, answer)
        self.reached.add(f"{method.upper()} {path}")
        is_json = answer.headers.get("content-type", "").startswith("application/json")
        return answer.json() if is_json else answer.text

    def example(self, method: str, path: str, n: int = 0, **kwargs: Any) -> Any:
        return self(method, path, json=example(self.document, method, path, n), **kwargs)


@pytest.fixture(scope="module")
def drive(http, document):
    return Driver(http, document)


A = "/agentmemory"


def test_every_answer_the_document_declares_has_a_schema_and_errors_share_one(document):
    missing, loose = [], []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, answer in operation["responses"].items():
                schemas = [c.get("schema") for c in answer.get("content", {}).values()]
                if not schemas or not all(schemas):
                    missing.append(f"{method.upper()} {path} {status}")
                elif int(status) >= 400 and "#/components/schemas/Error" not in json.dumps(schemas):
                    loose.append(f"{method.upper()} {path} {status}")
    missing = [m for m in missing if m not in UNDECLARED]
    assert not missing, "answers without a schema: " + ", ".join(missing)
    assert not loose, "errors not referring to Error: " + ", ".join(loose)
    assert "HTTPValidationError" not in document["components"]["schemas"]


# Declared by the MCP routes' own module (a tool's result is MCP's CallToolResult).
UNDECLARED: set[str] = set()


def test_every_request_body_carries_an_example(document):
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if "requestBody" in operation:
                example(document, method, path)


def test_ingest_and_session_routes_answer_what_the_document_declares(drive, document):
    drive.families.add("ingest")
    stored = drive.example("POST", f"{A}/observe", expect=201)
    assert "eventSeq" in stored
    again = drive.example("POST", f"{A}/observe", expect=201)
    assert again["deduplicated"] is True
    bulk = drive.example("POST", f"{A}/observe/bulk")
    assert bulk["total"] == 2
    mixed = {"observations": [envelope("truth", 1), {"hookType": "stop"}]}
    assert drive("POST", f"{A}/observe/bulk", json=mixed)["failed"] == 1
    started = drive.example("POST", f"{A}/session/start")
    assert started["memorySessionId"]
    drive.example("POST", f"{A}/summarize", expect=202)
    drive("POST", f"{A}/session/end")
    assert drive("GET", f"{A}/sessions")["sessions"]
    drive("GET", f"{A}/observations", params={"sessionId": "c0ffee"})
    drive("GET", f"{A}/livez")
    drive("GET", f"{A}/health", expect=(200, 503))
    assert drive("GET", f"{A}/server")["pid"]


def test_board_routes_answer_what_the_document_declares(drive):
    drive.families.add("board")
    board = f"{A}/board"
    row = drive.example("POST", f"{board}/register")["sessionId"]
    manual = drive.example("POST", f"{board}/register", 1)["sessionId"]
    assert drive("GET", f"{board}/sessions")["sessions"]
    assert drive("GET", f"{board}/sessions/{{session_id}}", ids={"session_id": manual})["snapshot"]
    drive.example("POST", f"{board}/sessions/{{session_id}}/update", ids={"session_id": manual})
    # The examples name rows of their own; here, the rows just registered.
    drive("POST", f"{board}/continue", json={"source": manual, "current": row})
    drive("POST", f"{board}/release", json={"source": manual, "current": row})
    nobody = {"session_id": "2020-01-01-0000-nobody"}
    refused = drive.example(
        "POST", f"{board}/sessions/{{session_id}}/update", ids=nobody, expect=409
    )
    assert refused["ok"] is False and refused["error"]
    drive.example("POST", f"{board}/sessions/{{session_id}}/archive", ids={"session_id": manual})
    drive.example("POST", f"{board}/organize")
    assert drive.example("POST", f"{board}/trigger")["trigger"]["operation"] == "update"


def test_memory_routes_answer_what_the_document_declares(drive):
    drive.families.add("memory")
    written = drive.example("POST", f"{A}/remember", expect=201)
    fragment = written["memory"]["id"]
    merged = drive.example("POST", f"{A}/remember", expect=(200, 201))
    assert merged["action"] in ("created", "merged")
    drive.example("POST", f"{A}/remember", 1, expect=201)
    drive.example("POST", f"{A}/search")
    drive.example("POST", f"{A}/smart-search")
    expanded = drive("POST", f"{A}/smart-search", json={"expandIds": [fragment]})
    assert expanded["results"]
    drive("GET", f"{A}/memories")
    drive("GET", f"{A}/memories/{{memory_id}}", ids={"memory_id": fragment})
    drive("GET", f"{A}/fragments/{{fragment_id}}", ids={"fragment_id": fragment})
    drive("GET", f"{A}/projects/{{project}}/memory", ids={"project": "demo-app"})
    drive.example("POST", f"{A}/context")
    drive.example("POST", f"{A}/enrich")
    one = {"fragment_id": fragment}
    drive.example("PATCH", f"{A}/fragments/{{fragment_id}}", ids=one)
    drive("DELETE", f"{A}/fragments/{{fragment_id}}", ids=one, params={"dryRun": "true"})
    drive.example("POST", f"{A}/maintain")
    drive("POST", f"{A}/reindex")
    drive("POST", f"{A}/jobs/run")
    drive.example("POST", f"{A}/purge")
    drive.example("POST", f"{A}/purge", 1)
    drive("POST", f"{A}/purge", json={"text": "abc"}, expect=400)
    assert "fragments" in drive("GET", f"{A}/stale-fragments")
    drive("POST", f"{A}/forget", json={"memoryId": fragment})
    drive("DELETE", f"{A}/fragments/{{fragment_id}}", ids=one, expect=400)


def test_graph_import_and_export_routes_answer_what_the_document_declares(drive):
    drive.families.add("graph")
    drive.example("POST", f"{A}/graph/query")
    drive.example("POST", f"{A}/graph/query", 1)
    drive("GET", f"{A}/graph/stats")
    drive("POST", f"{A}/graph/reset")
    assert drive("GET", f"{A}/replay/import-jsonl")["status"] == "idle"
    started = drive("POST", f"{A}/replay/import-jsonl", json={"path": "~/transcripts"}, expect=202)
    assert started["imported"] == 1

    def finished():
        """the transcript import finished"""
        return drive("GET", f"{A}/replay/import-jsonl")["status"] != "running"

    wait_for(finished)
    assert drive("GET", f"{A}/replay/import-jsonl")["status"] == "done"
    archive = drive("GET", f"{A}/export", params={"includeEvents": "true"})
    drive("POST", f"{A}/import", json={"exportData": archive, "strategy": "skip"})
    drive.example("POST", f"{A}/import")
    streamed = drive(
        "POST", f"{A}/import/archive", content=archive.encode(), params={"strategy": "skip"}
    )
    assert streamed["source"] == "memvault" and streamed["complete"]
    drive("POST", f"{A}/import/archive", content=b"not an archive", expect=400)
    drive("GET", f"{A}/mcp/tools")
    drive("POST", f"{A}/mcp/call", json={"name": "memory_sessions", "arguments": {}})
    drive("POST", f"{A}/mcp/call", json={"name": "no_such_tool"}, expect=400)
    refused = {
        "name": "memory_session_update",
        "arguments": {"session_id": "2020-01-01-0000-nobody", "topic": "t"},
    }
    assert drive("POST", f"{A}/mcp/call", json=refused, expect=409)["report"]["ok"] is False


BAD = [
    ("POST", f"{A}/observe", {"hookType": "stop"}),
    ("POST", f"{A}/observe/bulk", {"observations": []}),
    ("POST", f"{A}/session/start", {"sessionId": ""}),
    ("POST", f"{A}/summarize", {"sessionId": "no-such-session"}),
    ("POST", f"{A}/board/register", {"agentName": "a", "unknown": 1}),
    ("POST", f"{A}/search", {"query": ""}),
    ("POST", f"{A}/remember", {"project": "p"}),
    ("POST", f"{A}/forget", {}),
    ("POST", f"{A}/graph/query", {"maxDepth": -1}),
    ("POST", f"{A}/replay/import-jsonl", {"maxFiles": 0}),
    ("POST", f"{A}/import", {"exportData": {"nothing": "here"}}),
    ("GET", f"{A}/sessions?limit=0", None),
]


@pytest.mark.parametrize(("method", "path", "body"), BAD, ids=[f"{m} {p}" for m, p, _ in BAD])
def test_a_bad_request_answers_the_documented_error(drive, method, path, body):
    route = path.split("?")[0]
    answer = drive.http.request(method, path, json=body)
    assert answer.status_code == 400, answer.text
    check_answer(drive.document, method, route, answer)


def test_missing_ids_and_the_guards_answer_the_documented_error(drive, served):
    drive("GET", f"{A}/memories/{{memory_id}}", ids={"memory_id": "nothing/here.md"}, expect=404)
    drive(
        "GET",
        f"{A}/board/sessions/{{session_id}}",
        ids={"session_id": "2020-01-01-0000-x"},
        expect=404,
    )
    drive(
        "POST",
        f"{A}/observe",
        json=envelope("web"),
        headers={"Origin": "https://elsewhere.example"},
        expect=403,
    )
    port = served.url.rsplit(":", 1)[1]
    drive("GET", f"{A}/sessions", headers={"Host": f"elsewhere.example:{port}"}, expect=421)
    drive("POST", f"{A}/observe", content=b" " * (2 << 20), expect=413)


def test_an_answer_with_a_key_the_document_does_not_declare_fails_the_check(http, document):
    answer = http.get(f"{A}/livez")
    check_answer(document, "GET", f"{A}/livez", answer)
    grown = httpx.Response(200, json={**answer.json(), "uptime": 3}, request=answer.request)
    with pytest.raises(AssertionError, match="uptime"):
        check_answer(document, "GET", f"{A}/livez", grown)
    wrong = httpx.Response(201, json=answer.json(), request=answer.request)
    with pytest.raises(AssertionError, match="not declared"):
        check_answer(document, "GET", f"{A}/livez", wrong)


FAMILIES = {"ingest", "board", "memory", "graph"}


def test_every_operation_in_the_document_was_driven(drive, document):
    """Runs after the tests above: a route added to the document is driven there too."""
    if drive.families != FAMILIES:
        pytest.skip("the operations are driven by the tests above, not run here")
    every = {f"{m.upper()} {p}" for p, ops in document["paths"].items() for m in ops}
    assert every - drive.reached == set()
