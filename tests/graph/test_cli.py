"""``memvault graph …``, run as a subprocess like a person would."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memvault import Memory
from memvault.pipeline.graph_job import extract_session_graph
from memvault.vault.remember import Draft
from tests.pipeline.sessions import CHINESE, conversation


@pytest.fixture
def home(tmp_path):
    """A memory home whose graph holds one session's entities."""
    path = tmp_path / "home"
    with Memory.open(home=path) as memory:
        memory.observe_many(conversation("zh", CHINESE))
        while extract_session_graph(memory.store, "zh", limit=100):
            pass
    return path


def memvault(home, *args, stdin=""):
    env = {**os.environ, "MEMVAULT_HOME": str(home), "COLUMNS": "200"}
    env.pop("MEMVAULT_VAULT", None)
    return subprocess.run(
        [sys.executable, "-m", "memvault.cli", "graph", *args],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=60,
    )


def test_stats_as_json_and_as_tables(home):
    raw = memvault(home, "stats", "--json")
    assert raw.returncode == 0, raw.stderr
    assert json.loads(raw.stdout)["nodesByType"] == {"decision": 1, "error": 1, "file": 1}

    shown = memvault(home, "stats")
    assert shown.returncode == 0, shown.stderr
    assert "3 node(s)" in shown.stdout
    assert "causes" in shown.stdout and "fixes" in shown.stdout


def test_query_by_name_and_by_walk(home):
    named = json.loads(memvault(home, "query", "deploy", "--json").stdout)
    assert [n["id"] for n in named["nodes"]] == ["file:scripts/deploy.sh"]

    walked = memvault(home, "query", "--start", "file:scripts/deploy.sh", "--depth", "1", "--json")
    found = json.loads(walked.stdout)
    assert "error:rsync: command not found" in {n["id"] for n in found["nodes"]}
    assert {e["type"] for e in found["edges"]} >= {"causes", "fixes"}

    table = memvault(home, "query", "--type", "error")
    assert table.returncode == 0, table.stderr
    assert "rsync: command not found" in table.stdout and "deploy.sh" not in table.stdout


def test_query_refuses_an_unknown_type(home):
    result = memvault(home, "query", "--type", "planet")

    assert result.returncode == 2
    assert "--type must be one of" in result.stderr


def test_reset_asks_first_then_empties_the_graph(home):
    declined = memvault(home, "reset", stdin="n\n")
    assert declined.returncode == 1
    assert json.loads(memvault(home, "stats", "--json").stdout)["totalNodes"] == 3

    done = memvault(home, "reset", "--yes")
    assert done.returncode == 0, done.stderr
    assert "3 node(s)" in done.stdout
    assert json.loads(memvault(home, "stats", "--json").stdout)["totalNodes"] == 0
    assert memvault(home, "query").stdout.strip() == "nothing found"


def test_reset_queues_the_graph_to_be_read_again(home):
    with Memory.open(home=home) as memory:
        memory.remember(
            Draft(
                project="demo-app",
                summary="The deploy script needs scp on CI",
                facts=["files: .github/workflows/deploy.yml"],
                tags=["deploy"],
            )
        )
        held = memory.store.graph_stats()

    done = memvault(home, "reset", "--yes")
    assert done.returncode == 0, done.stderr
    assert "queued" in done.stdout and "fragments" in done.stdout

    with Memory.open(home=home) as memory:
        assert memory.store.graph_stats().total_nodes == 0
        memory.pipeline.worker.drain()  # what a running server's worker does
        assert memory.store.graph_query(start="file:.github/workflows/deploy.yml").nodes
        while extract_session_graph(memory.store, "zh", limit=100):
            pass
        assert memory.store.graph_stats() == held
