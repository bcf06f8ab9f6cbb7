"""A session's graph does not depend on how its events were cut into batches: read live a
few events at a time, or all at once by a rebuild, it is the same graph."""

from __future__ import annotations

import pytest

from memvault import Memory
from memvault.pipeline.graph_job import extract_session_graph
from tests.pipeline.sessions import (
    CHINESE,
    ROOT,
    bash,
    bash_failure,
    conversation,
    edit,
    prompt,
    read,
    reply,
)

SESSION = [
    prompt("Fix the failing login test"),
    read(f"{ROOT}/tests/test_login.py"),
    bash_failure(
        "pytest tests/test_login.py",
        "E   KeyError: 'user_id'\nFAILED tests/test_login.py::test_login",
    ),
    reply("We decided to use httpx instead of requests for the login client."),
    edit(f"{ROOT}/src/login.py", "import requests", "import httpx\n\ndef login():\n    pass\n"),
    edit(f"{ROOT}/src/session.py", "", "def refresh():\n    pass\n"),
    bash("pytest tests/test_login.py", "3 passed"),
    reply("Fixed: login goes through httpx now."),
    *CHINESE,
    prompt("Now switch the profile client as well"),
    bash("pip install httpx", "Successfully installed httpx-0.27.0"),
    reply("决定改用httpx替换requests，profile 客户端也一样。"),
    edit(f"{ROOT}/src/profile.py", "import requests", "import httpx"),
    bash_failure("npm test", "TypeError: fetchUser is not a function\n    at src/api.ts:3:1"),
    edit(f"{ROOT}/src/api.ts", "", "export function fetchUser() {}"),
    bash("npm test", "12 passed"),
]


def graph_of(home, batch: int):
    """Everything the graph holds after reading SESSION ``batch`` events at a time."""
    with Memory.open(home=home) as memory:
        memory.observe_many(conversation("s1", SESSION))
        while extract_session_graph(memory.store, "s1", limit=batch):
            pass
        return _everything(memory.store)


def _everything(store):
    nodes = store.graph_query(limit=200).nodes
    edges = {}
    for n in nodes:
        for e in store.graph_query(start=n.id, depth=1, limit=200).edges:
            edges[e.id] = (e.weight, e.last_seen, sorted(e.sources))
    return (
        store.graph_stats().to_dict(),
        sorted((n.id, n.mentions, n.first_seen, n.last_seen, sorted(n.sources)) for n in nodes),
        edges,
    )


@pytest.fixture(scope="module")
def all_at_once(tmp_path_factory):
    return graph_of(tmp_path_factory.mktemp("once") / "home", 10_000)


@pytest.mark.parametrize("batch", [1, 3])
def test_batches_of_any_size_give_the_graph_of_all_at_once(tmp_path, all_at_once, batch):
    stats, nodes, edges = graph_of(tmp_path / "home", batch)

    assert stats == all_at_once[0]
    assert nodes == all_at_once[1]
    assert edges == all_at_once[2]


def test_the_graph_read_all_at_once_has_every_kind_of_relation(all_at_once):
    stats, _, edges = all_at_once

    assert set(stats["edgesByType"]) == {
        "causes",
        "fixes",
        "imports",
        "modifies",
        "related_to",
        "uses",
    }
    assert "file:src/login.py|error:keyerror: 'user_id'|fixes" in edges
    assert "file:src/api.ts|error:typeerror: fetchuser is not a function|fixes" in edges


def test_a_fix_found_across_two_runs_of_the_pipeline(memory):
    """The reviewer's case: the failure and its edit in one run, the passing run later."""
    steps = [
        prompt("Fix the failing login test"),
        bash_failure("pytest tests/test_login.py", "E   KeyError: 'user_id'"),
        edit(f"{ROOT}/src/login.py", "", "def login(): pass"),
        bash("pytest tests/test_login.py", "3 passed"),
    ]
    envelopes = conversation("s1", steps)
    memory.observe_many(envelopes[:3])
    assert extract_session_graph(memory.store, "s1", limit=100) == 3
    memory.observe_many(envelopes[3:])
    assert extract_session_graph(memory.store, "s1", limit=100) == 1

    fixes = [e.id for e in memory.store.graph_query(start="file:src/login.py").edges]
    assert "file:src/login.py|error:keyerror: 'user_id'|fixes" in fixes
    assert memory.store.graph_stats().edges_by_relation["fixes"] == 1
