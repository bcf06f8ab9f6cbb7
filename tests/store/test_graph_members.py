"""Exact membership: every memory id a node or an edge was seen in is recorded, so a
source is counted once however long ago it was first seen, and one can be forgotten."""

from __future__ import annotations

import json
import sqlite3

import pytest

from memvault.derive.entities import graph_of_fragment
from memvault.graph.model import SOURCES_LIMIT
from memvault.store.sqlite import SQLiteStore
from memvault.vault.remember import Draft
from tests.store.graphs import AT, delta_of


@pytest.fixture
def store(memory):
    return memory.store


def node(store, node_id):
    found = store.graph_query(start=node_id, depth=0).nodes
    return found[0] if found else None


def edges(store, node_id):
    return {(e.source, e.relation, e.target): e for e in store.graph_query(start=node_id).edges}


def test_a_source_beyond_the_kept_list_is_not_counted_again(store):
    for n in range(SOURCES_LIMIT + 5):
        store.write_fragment_graph(
            delta_of(
                ("concept", "auth", f"f{n}"),
                ("file", "src/auth.py", f"f{n}"),
                relations=[("auth", "src/auth.py", "related_to", f"f{n}")],
            )
        )
    # f0 dropped out of the kept list long ago; written again, it is still known.
    store.write_fragment_graph(
        delta_of(
            ("concept", "auth", "f0"),
            ("file", "src/auth.py", "f0"),
            relations=[("auth", "src/auth.py", "related_to", "f0")],
        )
    )

    auth = node(store, "concept:auth")
    assert auth.mentions == SOURCES_LIMIT + 5
    assert len(auth.sources) == SOURCES_LIMIT and "f0" not in auth.sources
    (edge,) = edges(store, "concept:auth").values()
    assert edge.weight == SOURCES_LIMIT + 5


def test_a_fragment_merged_again_after_many_others_counts_once(memory):
    """The reviewer's case: an agent saves the first of many fragments again."""
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike"
    words += " november oscar papa quebec romeo sierra tango uniform victor"
    for i, word in enumerate(words.split()):
        memory.remember(
            Draft(
                project="demo-app",
                summary=f"The {word} service needs {word} tokens for {i} reasons",
                facts=[f"{word}: value {i * 7919}", f"{word}-{word}: {word} {i}"],
                tags=["auth"],
            )
        )
    assert node(memory.store, "concept:auth").mentions == 22

    for _ in range(2):
        memory.remember(
            Draft(
                project="demo-app",
                summary="The alpha service needs alpha tokens for 0 reasons",
                facts=["alpha: value 0", "alpha-alpha: alpha 0"],
                tags=["auth"],
            )
        )
        assert node(memory.store, "concept:auth").mentions == 22


def test_forgetting_a_source_takes_it_off_every_node_and_edge(store):
    store.write_fragment_graph(graph_of_fragment("keep", _decision("src/auth.ts, src/api.ts")))
    store.write_fragment_graph(graph_of_fragment("gone", _decision("src/auth.ts, src/db.ts")))
    assert node(store, "file:src/auth.ts").mentions == 2

    store.forget_graph_source("gone")

    assert node(store, "file:src/auth.ts").mentions == 1
    assert node(store, "file:src/auth.ts").sources == ["keep"]
    assert node(store, "file:src/db.ts") is None  # only "gone" named it
    decision = "decision:we'll use the refresh-token flow"
    assert node(store, decision).mentions == 1
    found = {k: e for k, e in edges(store, decision).items() if k[0] == decision}
    assert set(found) == {
        (decision, "modifies", "file:src/auth.ts"),
        (decision, "modifies", "file:src/api.ts"),
    }
    assert all(e.weight == 1 and e.sources == ["keep"] for e in found.values())
    assert store.graph_stats() == _stats_of_one(store)


def test_forgetting_the_last_source_empties_the_graph_and_its_counts(store):
    store.write_fragment_graph(graph_of_fragment("only", _decision("src/auth.ts")))
    assert store.graph_stats().total_nodes > 0

    store.forget_graph_source("only")
    store.forget_graph_source("only")  # forgetting twice changes nothing more
    store.forget_graph_source("never-seen")

    assert store.graph_stats().to_dict() == {
        "totalNodes": 0,
        "totalEdges": 0,
        "nodesByType": {},
        "edgesByType": {},
    }
    assert store.graph_query().nodes == []
    assert store.graph_query(text="auth").nodes == []
    # Written again, it counts again: nothing of it was left behind.
    store.write_fragment_graph(graph_of_fragment("only", _decision("src/auth.ts")))
    assert node(store, "file:src/auth.ts").mentions == 1


def test_a_node_forgotten_to_nothing_takes_its_other_edges_along(store):
    store.write_fragment_graph(
        delta_of(("file", "a.py", "f1"), ("file", "b.py", "f1"), ("file", "b.py", "f2"))
    )
    # An edge whose evidence is not a mention of a.py (a session's `fixes`, say).
    store.write_fragment_graph(
        delta_of(
            ("file", "a.py", "f1"),
            ("file", "b.py", "f2"),
            relations=[("a.py", "b.py", "depends_on", "f2")],
        )
    )

    store.forget_graph_source("f1")

    assert node(store, "file:a.py") is None
    assert node(store, "file:b.py").mentions == 1
    assert edges(store, "file:b.py") == {}
    assert store.graph_stats().to_dict()["edgesByType"] == {}


def test_forgetting_reads_through_indexes(tmp_path):
    SQLiteStore(tmp_path / "m.db").close()
    conn = sqlite3.connect(tmp_path / "m.db")
    for table in ("graph_node_sources", "graph_edge_sources"):
        plan = " ".join(
            row[3]
            for row in conn.execute(
                f"EXPLAIN QUERY PLAN SELECT * FROM {table} WHERE source = ?", ("x",)
            )
        )
        assert "INDEX" in plan and "SCAN" not in plan, plan


def test_the_migration_backfills_members_from_the_kept_lists(tmp_path):
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    _as_before_0010(path, mentions=30, sources=["f1", "f2"])

    store = SQLiteStore(path)
    try:
        before = node(store, "file:src/a.py")
        assert before.mentions == 30  # counts of the past are kept
        store.write_fragment_graph(
            delta_of(
                ("file", "src/a.py", "f2"),
                ("library", "httpx", "f2"),
                relations=[("src/a.py", "httpx", "imports", "f2")],
            )
        )
        assert node(store, "file:src/a.py").mentions == 30  # f2 was a member already
        (edge,) = edges(store, "file:src/a.py").values()
        assert edge.weight == 7
        store.write_fragment_graph(delta_of(("file", "src/a.py", "f3")))
        assert node(store, "file:src/a.py").mentions == 31
        store.forget_graph_source("f1")
        assert node(store, "file:src/a.py").mentions == 30
    finally:
        store.close()


def _as_before_0010(path, *, mentions, sources):
    """Make ``path`` look like a database the graph-members migration has not reached,
    holding one node and one edge written the old way."""
    conn = sqlite3.connect(path)
    with conn:
        for table in ("graph_node_sources", "graph_edge_sources"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DROP INDEX sessions_graph_behind")
        conn.execute("DELETE FROM schema_migrations WHERE version = 10")
        kept = json.dumps(sources)
        for key, kind in (("src/a.py", "file"), ("httpx", "library")):
            node_id = conn.execute(
                "INSERT INTO graph_nodes (kind, key, name, mentions, first_seen, last_seen, "
                "sources) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (kind, key, key, mentions, AT, AT, kept),
            ).fetchone()[0]
            conn.execute("INSERT INTO graph_names (rowid, key) VALUES (?, ?)", (node_id, key))
            conn.execute(
                "INSERT INTO graph_counts (name, value) VALUES (?, 1) "
                "ON CONFLICT (name) DO UPDATE SET value = value + 1",
                (f"node:{kind}",),
            )
        conn.execute(
            "INSERT INTO graph_edges (src, dst, relation, weight, last_seen, sources) "
            "VALUES (1, 2, 'imports', 7, ?, ?)",
            (AT, kept),
        )
        conn.execute("INSERT INTO graph_counts (name, value) VALUES ('edge:imports', 1)")
    conn.close()


def _decision(files: str) -> Draft:
    return Draft(
        project="demo-app",
        summary="We'll use the refresh-token flow.",
        facts=["decision: use the refresh-token flow", f"files: {files}"],
        tags=["decision", "auth"],
        date="2026-11-30",
    )


def _stats_of_one(store):
    """What the graph would hold had only the fragment "keep" been written."""
    path = store.path.parent / "fresh.db"
    fresh = SQLiteStore(path)
    try:
        fresh.write_fragment_graph(graph_of_fragment("keep", _decision("src/auth.ts, src/api.ts")))
        return fresh.graph_stats()
    finally:
        fresh.close()
