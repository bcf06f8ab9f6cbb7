"""A fact saved twice is one fragment file, whichever way it comes: through the pipeline
(the same failure in two sessions), through REST ``/remember`` and through MCP
``memory_save`` on a real server, in the same words and in a light rephrasing (lexical
similarity above 0.8). No ``… 2.md`` copy is made."""

from __future__ import annotations

import anyio
import httpx
import pytest

from memvault.analyzer import similarity
from tests.mcp.clients import call, http
from tests.pipeline.sessions import ROOT, bash, bash_failure, conversation, edit, prompt, reply

SAID = "Use pgbouncer in transaction mode for the API pool."
# Another verb of choosing and one more word: what a person or an agent writes next time.
REPHRASED = "We chose pgbouncer in transaction mode for the API pool."


def test_the_rephrasing_is_lexically_more_than_0_8_alike():
    assert similarity(SAID, REPHRASED) > 0.8


def _fragment_files(folder) -> list[str]:
    return sorted(p.name for p in folder.glob("*.md")) if folder.exists() else []


def _failure_fixed(stack_pid: int) -> list[tuple[str, dict]]:
    error = (
        "Error: connect ECONNREFUSED 127.0.0.1:5432 at PgPool.connect (src/db/pool.js:14)) "
        "at process.processTicksAndRejections (node:internal/process/task_queues:95:5) "
        f"pid {stack_pid}"
    )
    return [
        prompt("The API tests fail against the local database, can you fix it?"),
        bash_failure("npm test", error),
        edit(f"{ROOT}/src/db/pool.js", "port: 5433", "port: 5432"),
        bash("npm test", "Tests: 12 passed, 12 total"),
        reply("Decided: the API pool uses pgbouncer in transaction mode."),
    ]


def test_the_same_failure_and_decision_in_two_sessions_are_one_file_each(memory):
    """The pipeline learns the pitfall and the decision twice; the second session's
    error line differs only in what belongs to one run (a pid), and merges."""
    memory.observe_many(conversation("first", _failure_fixed(4411)))
    memory.observe_many(conversation("second", _failure_fixed(5120)))

    first = memory.pipeline.extract_session("first")
    second = memory.pipeline.extract_session("second")

    assert [r.action for r in first] == ["created", "created"]
    assert [r.action for r in second] == ["merged", "merged"]
    assert {r.path for r in second} == {r.path for r in first}
    assert len(_fragment_files(memory.settings.fragments_path)) == 2


@pytest.mark.parametrize("again", [SAID, REPHRASED], ids=["same words", "rephrased"])
def test_rest_remember_twice_merges(server, again):
    project = f"rest-twice-{len(again)}"
    url = f"{server.url}/agentmemory/remember"
    first = httpx.post(url, json={"project": project, "content": SAID}, timeout=30)
    second = httpx.post(url, json={"project": project, "content": again}, timeout=30)

    assert first.status_code == 201, first.text
    assert second.status_code == 200, second.text
    assert second.json()["path"] == first.json()["path"]
    folder = server.home / "vault" / "agent-memory"
    assert [n for n in _fragment_files(folder) if n.startswith(project)] == [
        first.json()["path"].rpartition("/")[2]
    ]


@pytest.mark.parametrize("again", [SAID, REPHRASED], ids=["same words", "rephrased"])
def test_mcp_memory_save_twice_merges(server, again):
    project = f"mcp-twice-{len(again)}"

    async def main() -> tuple[dict, dict]:
        async with http(server.url) as client:
            saved = await call(client, "memory_save", {"project": project, "facts": [SAID]})
            repeated = await call(client, "memory_save", {"project": project, "facts": [again]})
            return saved.structured_content, repeated.structured_content

    saved, repeated = anyio.run(main)
    assert (saved["action"], repeated["action"]) == ("created", "merged")
    assert repeated["path"] == saved["path"]
    folder = server.home / "vault" / "agent-memory"
    assert len([n for n in _fragment_files(folder) if n.startswith(project)]) == 1
