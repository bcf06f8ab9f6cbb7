"""``POST /agentmemory/replay/import-jsonl`` against a real server whose user's home holds
Claude Code transcripts."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.helpers import Server, fixtures_dir, wait_for
from tests.importers.conftest import COMPACTED_SESSION, lay_out_home

SHORT = "55604662-cf2a-4331-851a-ec234028f8ca"
TOOL_HEAVY = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"


@pytest.fixture(scope="module")
def user_home(tmp_path_factory):
    home = lay_out_home(tmp_path_factory.mktemp("rest") / "user", fixtures_dir())
    _long_transcript(home / "big" / "long-session.jsonl", turns=6_000)
    return home


@pytest.fixture(scope="module")
def server(user_home):
    running = Server(user_home / "memvault", env={"HOME": str(user_home)}).start()
    yield running
    running.stop()


@pytest.fixture
def client(server):
    with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=30) as http:
        yield http


def finished(client) -> dict:
    def done():
        """the import finished"""
        status = client.get("/replay/import-jsonl").json()
        return status if status["status"] != "running" else None

    return wait_for(done, timeout=120)


def test_an_import_starts_in_the_background_and_a_second_adds_nothing(client):
    response = client.post("/replay/import-jsonl", json={})

    assert response.status_code == 202
    started = response.json()
    assert started["success"] is True
    assert started["imported"] == started["discovered"] == 3
    assert started["sessionIds"] == sorted([COMPACTED_SESSION, SHORT, TOOL_HEAVY])
    assert (started["truncated"], started["traversalCapped"]) == (False, False)
    assert (started["maxFiles"], started["maxFilesUpperBound"]) == (200, 1000)
    report = finished(client)
    assert report["status"] == "done"
    assert report["report"]["newEvents"] == report["observations"] == 17
    assert report["report"]["errorCount"] == 0
    observations = client.get("/observations", params={"sessionId": TOOL_HEAVY}).json()
    titles = [o["title"] for o in observations["observations"]]
    assert titles[:2] == ["Prompt: start phoenix in background", "Bash: mix phx.server"]

    assert (
        client.post("/replay/import-jsonl", json={"path": "~/.claude/projects"}).status_code == 202
    )
    again = finished(client)["report"]
    assert (again["newEvents"], again["duplicates"]) == (0, 17)


def test_max_files_bounds_the_import(client):
    response = client.post("/replay/import-jsonl", json={"maxFiles": 1})

    assert response.status_code == 202
    body = response.json()
    assert (body["imported"], body["discovered"], body["truncated"]) == (1, 3, True)
    assert finished(client)["report"]["files"] == 1


def test_a_second_import_while_one_runs_is_refused(client, user_home):
    first = client.post("/replay/import-jsonl", json={"path": str(user_home / "big")})
    second = client.post("/replay/import-jsonl", json={})

    assert first.status_code == 202
    assert second.status_code == 409
    assert "an import is already running" in second.json()["error"]
    assert finished(client)["report"]["newEvents"] == 6_000 * 3
    assert client.post("/replay/import-jsonl", json={}).status_code == 202
    finished(client)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"path": "/etc"}, "is outside your home folder"),
        ({"path": "~/../.."}, "is outside your home folder"),
        ({"path": "~/.claude/nowhere"}, "does not exist"),
        ({"path": "relative/folder"}, "must be absolute"),
        ({"path": "~/big/long-session.jsonl.txt"}, "does not exist"),
        ({"maxFiles": 0}, "maxFiles"),
        ({"maxFiles": 1001}, "maxFiles"),
        ({"maxFiles": "5"}, "maxFiles"),
    ],
)
def test_a_bad_request_is_refused_naming_the_problem(client, body, problem):
    response = client.post("/replay/import-jsonl", json=body)

    assert response.status_code == 400
    assert problem in response.json()["error"]


def test_a_file_that_is_not_a_transcript_is_refused(client, user_home):
    (user_home / "notes.md").write_text("# notes\n")

    response = client.post("/replay/import-jsonl", json={"path": str(user_home / "notes.md")})

    assert response.status_code == 400
    assert "is not a .jsonl file or a folder" in response.json()["error"]


def _long_transcript(path, *, turns: int) -> None:
    """A session of ``turns`` prompt → tool call → result turns (three events each)."""
    path.parent.mkdir(parents=True)
    with path.open("w") as out:
        for n in range(turns):
            common = {
                "sessionId": "long-session",
                "cwd": "/home/dev/app",
                "timestamp": "2026-11-30T10:00:00.000Z",
            }
            rows = [
                {
                    "type": "user",
                    "uuid": f"p{n}",
                    "message": {"role": "user", "content": f"do {n}"},
                },
                {
                    "type": "assistant",
                    "uuid": f"a{n}",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": f"Running step {n}."},
                            {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {}},
                        ],
                    },
                },
                {
                    "type": "user",
                    "uuid": f"r{n}",
                    "message": {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok"}
                        ],
                    },
                },
            ]
            out.writelines(json.dumps({**common, **row}) + "\n" for row in rows)
