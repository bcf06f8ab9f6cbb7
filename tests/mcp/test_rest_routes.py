"""agentmemory's REST MCP routes on a real server: `GET /agentmemory/mcp/tools` and
`POST /agentmemory/mcp/call`, in agentmemory's shapes, over the same tools as `/mcp`."""

from __future__ import annotations

import httpx
import pytest

from tests.mcp.clients import TOOL_NAMES


@pytest.fixture
def rest(server):
    with httpx.Client(base_url=f"{server.url}/agentmemory/mcp", timeout=30) as client:
        yield client


def _call(rest, name: str, arguments: dict | None = None) -> httpx.Response:
    return rest.post("/call", json={"name": name, "arguments": arguments or {}})


def test_tools_lists_every_tool_with_its_input_schema(rest):
    answer = rest.get("/tools")
    assert answer.status_code == 200
    tools = {tool["name"]: tool for tool in answer.json()["tools"]}
    assert set(tools) == TOOL_NAMES
    search = tools["memory_search"]
    assert "L0" in search["description"]
    assert search["inputSchema"]["required"] == ["query"]
    assert search["inputSchema"]["properties"]["limit"]["maximum"] == 100
    assert search["annotations"]["readOnlyHint"] is True


def test_a_call_answers_content_and_structured_content(rest, vault):
    saved = _call(
        rest,
        "memory_save",
        {"project": "rest-app", "summary": "Deploys go out on Tuesdays.", "facts": ["deploy: tue"]},
    )
    assert saved.status_code == 200, saved.text
    body = saved.json()
    assert body["isError"] is False
    assert body["content"][0]["type"] == "text"
    assert body["content"][0]["text"].startswith("created agent-memory/rest-app - ")
    assert (vault / body["structuredContent"]["path"]).is_file()

    found = _call(rest, "memory_search", {"query": "deploys tuesdays"}).json()
    assert found["structuredContent"]["results"][0]["id"] == body["structuredContent"]["id"]


def test_agentmemory_save_arguments_become_tags_and_facts(rest, vault):
    saved = _call(
        rest,
        "memory_save",
        {
            "content": "The cache key includes the locale.\n- ttl: 5 min",
            "type": "architecture",
            "concepts": "cache, locale",
            "files": "src/cache.py",
            "project": "rest-app",
            "agentId": "claude-code",
        },
    )
    assert saved.status_code == 200, saved.text
    written = (vault / saved.json()["structuredContent"]["path"]).read_text(encoding="utf-8")
    assert "summary: The cache key includes the locale." in written
    for expected in (
        "- cache",
        "- locale",
        "- architecture",
        "- file: src/cache.py",
        "- ttl: 5 min",
    ):
        assert expected in written


def test_agentmemory_smart_search_finds_and_expands(rest):
    saved = _call(
        rest, "memory_save", {"project": "rest-app", "facts": ["queue: rabbitmq → at-least-once"]}
    ).json()
    fragment_id = saved["structuredContent"]["id"]

    compact = _call(rest, "memory_smart_search", {"query": "rabbitmq", "limit": 5}).json()
    assert fragment_id in [r["id"] for r in compact["structuredContent"]["results"]]

    expanded = _call(
        rest, "memory_smart_search", {"query": "x", "expandIds": f"{fragment_id},obs_999999"}
    ).json()
    assert expanded["structuredContent"]["mode"] == "expanded"
    (entry,) = expanded["structuredContent"]["results"]
    assert entry["id"] == fragment_id
    assert "queue: rabbitmq → at-least-once" in entry["body"]


def test_agentmemory_recall_arguments_are_understood(rest):
    recalled = _call(
        rest,
        "memory_recall",
        {"query": "deploy", "limit": 5, "format": "full", "token_budget": 300},
    )
    assert recalled.status_code == 200, recalled.text
    structured = recalled.json()["structuredContent"]
    assert structured["budget"] == 300
    assert structured["context"].startswith("📖 agent memory：")


def test_board_operations_answer_with_their_report(rest, vault):
    registered = _call(rest, "memory_session_register", {"topic": "rest board"}).json()
    session_id = registered["structuredContent"]["sessionId"]
    assert registered["content"][0]["text"].startswith(f"Your Memory Session ID is: {session_id}")
    assert (vault / "memory" / "sessions" / f"{session_id}.md").is_file()

    organized = _call(rest, "memory_organize", {"dry_run": True}).json()
    assert session_id in organized["structuredContent"]["keptActive"]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"name": "memory_file_history", "arguments": {"files": "a.py"}}, "Unknown tool: "),
        ({"arguments": {"query": "x"}}, "name is required"),
        ({"name": "", "arguments": {}}, "name is required"),
        ({"name": "memory_search", "arguments": ["x"]}, "arguments must be an object"),
        ({"name": "memory_search", "arguments": {}}, "query: Field required"),
        ({"name": "memory_search", "arguments": {"query": "x", "limit": 0}}, "limit: Input"),
        ({"name": "memory_get", "arguments": {"memoryId": "x"}}, "unknown argument(s) memoryId"),
    ],
)
def test_bad_calls_get_agentmemorys_400_with_the_problem(rest, body, error):
    answer = rest.post("/call", json=body)
    assert answer.status_code == 400
    assert set(answer.json()) == {"error"}
    assert error in answer.json()["error"]


def test_an_unknown_tool_is_named_as_agentmemory_names_it(rest):
    answer = _call(rest, "memory_lesson_save", {"content": "x"})
    assert (answer.status_code, answer.json()) == (
        400,
        {"error": "Unknown tool: memory_lesson_save"},
    )


def test_malformed_json_is_a_400(rest):
    answer = rest.post("/call", content=b"{not json", headers={"content-type": "application/json"})
    assert answer.status_code == 400
    assert "malformed JSON" in answer.json()["error"]


def test_a_missing_memory_is_404_and_a_refused_operation_409(rest):
    missing = _call(rest, "memory_get", {"id": "nothing - 2026-01-01 - here"})
    assert missing.status_code == 404
    assert "no memory 'nothing - 2026-01-01 - here'" in missing.json()["error"]

    refused = _call(rest, "memory_session_archive", {"session_id": "2026-01-01-0000-ghost-agent"})
    assert refused.status_code == 409
    body = refused.json()
    assert body["report"]["operation"] == "archive"
    assert body["report"]["ok"] is False
    assert "not archived, the row stays" in body["error"]
