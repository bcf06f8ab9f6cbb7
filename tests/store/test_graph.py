"""The graph in the store: merging with watermarks, counting, bounded indexed queries,
reset, and bringing a session's graph up to date."""

from __future__ import annotations

import sqlite3
import time

import pytest

from memvault.derive.entities import graph_of_fragment
from memvault.domain import Watermark
from memvault.graph.model import MAX_LIMIT, NEIGHBOURS_PER_NODE, SOURCES_LIMIT
from memvault.pipeline.graph_job import extract_session_graph
from memvault.store import graph_queries
from memvault.store.sqlite import SQLiteStore
from memvault.store.sqlite import graph as sqlite_graph
from tests.derive.test_fragment_entities import DECISION
from tests.pipeline.sessions import CHINESE, ROOT, conversation, read
from tests.store.graphs import AT, delta_of


@pytest.fixture
def store(memory):
    return memory.store


@pytest.fixture
def session(memory):
    memory.observe_many(conversation("s1", CHINESE))
    return "s1"


def node(store, node_id):
    (found,) = [n for n in store.graph_query(start=node_id, depth=0).nodes]
    return found


def watermark(store, session_id):
    return store.get_session(session_id).graph_extracted


def test_writing_a_session_graph_moves_its_watermark(store, session):
    delta = delta_of(("file", "src/a.py", "obs_1"))

    assert store.write_graph(session, delta, through=Watermark(AT, 5))
    assert watermark(store, session) == Watermark(AT, 5)
    assert node(store, "file:src/a.py").mentions == 1


def test_a_repeated_write_with_the_same_watermark_changes_nothing(store, session):
    delta = delta_of(
        ("file", "src/a.py", "obs_1"),
        ("library", "httpx", "obs_2"),
        relations=[("src/a.py", "httpx", "imports", "obs_2")],
    )
    assert store.write_graph(session, delta, through=Watermark(AT, 5))
    before = store.graph_query(start="file:src/a.py")

    assert not store.write_graph(session, delta, through=Watermark(AT, 5))
    assert store.graph_query(start="file:src/a.py") == before
    assert store.graph_stats().to_dict() == {
        "totalNodes": 2,
        "totalEdges": 1,
        "nodesByType": {"file": 1, "library": 1},
        "edgesByType": {"imports": 1},
    }


def test_the_watermark_only_moves_forward(store, session):
    assert store.write_graph(session, delta_of(("file", "a", "obs_9")), through=Watermark(AT, 9))

    assert not store.write_graph(
        session, delta_of(("file", "b", "obs_3")), through=Watermark(AT, 3)
    )
    assert watermark(store, session).seq == 9
    assert [n.name for n in store.graph_query(kind="file").nodes] == ["a"]


def test_a_run_overtaken_by_another_writes_nothing(store, session):
    assert store.write_graph(session, delta_of(("file", "a", "obs_4")), through=Watermark(AT, 4))

    # A run that began before the first one wrote (at watermark 0) reaches further.
    late = delta_of(("file", "a", "obs_4"), ("file", "b", "obs_6"))
    assert not store.write_graph(session, late, through=Watermark(AT, 6), after=0)
    assert store.write_graph(session, late, through=Watermark(AT, 6), after=4)
    assert node(store, "file:a").mentions == 1


def test_an_unknown_session_writes_nothing(store):
    assert not store.write_graph(
        "nobody", delta_of(("file", "a", "obs_1")), through=Watermark(AT, 1)
    )
    assert store.graph_stats().total_nodes == 0


def test_mentions_and_weights_accumulate_over_sessions(store, memory):
    for name in ("s1", "s2"):
        memory.observe_many(conversation(name, [read(f"{ROOT}/src/a.py")]))
    pair = [("file", "src/a.py", "{}"), ("library", "httpx", "{}")]
    for n, name in enumerate(("s1", "s2"), start=1):
        delta = delta_of(
            *[(k, v, s.format(f"obs_{n}")) for k, v, s in pair],
            relations=[("src/a.py", "httpx", "imports", f"obs_{n}")],
        )
        assert store.write_graph(name, delta, through=Watermark(AT, n))

    found = store.graph_query(start="file:src/a.py")
    assert [(n.id, n.mentions, n.sources) for n in found.nodes] == [
        ("file:src/a.py", 2, ["obs_1", "obs_2"]),
        ("library:httpx", 2, ["obs_1", "obs_2"]),
    ]
    (edge,) = found.edges
    assert (edge.relation, edge.weight, edge.sources) == ("imports", 2, ["obs_1", "obs_2"])


def test_stored_sources_keep_the_latest_only(store):
    for n in range(SOURCES_LIMIT + 5):
        store.write_fragment_graph(delta_of(("concept", "auth", f"fragment-{n}")))

    found = node(store, "concept:auth")
    assert found.mentions == SOURCES_LIMIT + 5
    assert found.sources == [f"fragment-{n}" for n in range(5, SOURCES_LIMIT + 5)]


def test_writing_the_same_fragment_again_counts_nothing_twice(store):
    store.write_fragment_graph(graph_of_fragment("refresh tokens", DECISION))
    store.write_fragment_graph(graph_of_fragment("refresh tokens", DECISION))
    once = store.graph_stats()

    assert node(store, "file:src/auth.ts").mentions == 1
    store.write_fragment_graph(graph_of_fragment("another fragment", DECISION))
    assert node(store, "file:src/auth.ts").mentions == 2
    assert store.graph_stats() == once  # the same nodes and edges, seen once more


def test_reset_empties_the_graph_and_sends_watermarks_back(store, session, memory):
    memory.observe_many(conversation("s2", [read(f"{ROOT}/src/b.py")]))
    assert extract_session_graph(store, session, limit=100) == len(memory.reads.events(session))
    assert extract_session_graph(store, "s2", limit=100) == 1
    held = store.graph_stats()

    assert store.reset_graph() == held
    assert store.graph_stats().to_dict()["totalNodes"] == 0
    assert store.graph_query().nodes == []
    assert store.graph_query(text="deploy").nodes == []
    assert watermark(store, session) == watermark(store, "s2") == Watermark()
    # Read again from the start, each event counted once.
    assert extract_session_graph(store, session, limit=100) == len(memory.reads.events(session))
    assert node(store, "file:scripts/deploy.sh").mentions == 2
    assert store.graph_query(start="file:src/b.py").nodes == []


def test_extracting_a_session_moves_through_it_in_batches(store, session, memory):
    total = len(memory.reads.events(session))

    assert extract_session_graph(store, session, limit=5) == 5
    assert watermark(store, session).seq == memory.reads.events(session)[4].seq
    handled = 5
    while done := extract_session_graph(store, session, limit=5):
        handled += done
    assert handled == total
    assert extract_session_graph(store, session, limit=5) == 0
    assert node(store, "file:scripts/deploy.sh").mentions == 2


def test_extraction_stops_at_until_seq(store, session, memory):
    third = memory.reads.events(session)[2].seq

    assert extract_session_graph(store, session, limit=100, until_seq=third) == 3
    assert watermark(store, session).seq == third
    assert extract_session_graph(store, session, limit=100, until_seq=third) == 0


def test_extracting_an_unknown_session_handles_nothing(store):
    assert extract_session_graph(store, "nobody", limit=10) == 0


# -- queries ------------------------------------------------------------------------------


@pytest.fixture
def chain(store):
    """a.py → b.py → c.py → d.py (imports), a.py mentioned most, and a library."""
    store.write_fragment_graph(
        delta_of(
            *[("file", f"src/{n}.py", "f1") for n in "abcd"],
            ("file", "src/a.py", "f2"),
            ("library", "httpx", "f1"),
            relations=[
                ("src/a.py", "src/b.py", "depends_on", "f1"),
                ("src/b.py", "src/c.py", "depends_on", "f1"),
                ("src/c.py", "src/d.py", "depends_on", "f1"),
                ("src/a.py", "httpx", "imports", "f1"),
            ],
        )
    )
    return store


def ids(found):
    return [n.id for n in found.nodes]


def test_a_walk_reaches_as_far_as_its_depth(chain):
    assert ids(chain.graph_query(start="file:src/a.py", depth=0)) == ["file:src/a.py"]
    assert sorted(ids(chain.graph_query(start="file:src/b.py", depth=1))) == [
        "file:src/a.py",
        "file:src/b.py",
        "file:src/c.py",
    ]
    walked = chain.graph_query(start="file:src/a.py", depth=3)
    assert sorted(ids(walked)) == [
        "file:src/a.py",
        "file:src/b.py",
        "file:src/c.py",
        "file:src/d.py",
        "library:httpx",
    ]
    assert len(walked.edges) == 4 and walked.depth == 3


def test_a_walk_can_keep_one_kind(chain):
    found = chain.graph_query(start="file:src/a.py", depth=2, kind="library")

    assert ids(found) == ["library:httpx"]
    assert found.edges == []  # the edges among what is returned


def test_a_start_may_be_written_as_its_name_is_shown(chain):
    assert ids(chain.graph_query(start="file:SRC/A.py", depth=0)) == ["file:src/a.py"]


def test_an_unknown_or_malformed_start_finds_nothing(chain):
    assert chain.graph_query(start="file:src/zzz.py").nodes == []
    assert chain.graph_query(start="no-kind-here").nodes == []
    assert chain.graph_query(start="planet:earth").nodes == []


def test_names_match_anywhere_from_three_characters_by_prefix_below(chain):
    assert ids(chain.graph_query(text="B.PY")) == ["file:src/b.py"]
    assert ids(chain.graph_query(text="http")) == ["library:httpx"]
    assert ids(chain.graph_query(text="sr", kind="file")) == [
        "file:src/a.py",  # mentioned most
        "file:src/b.py",
        "file:src/c.py",
        "file:src/d.py",
    ]
    assert ids(chain.graph_query(text="py")) == []  # 2 characters: a prefix, not a substring


def test_the_exact_name_comes_first(store):
    store.write_fragment_graph(
        delta_of(*[("library", "react-dom", f"f{n}") for n in range(3)], ("library", "react", "g"))
    )

    assert ids(store.graph_query(text="react")) == ["library:react", "library:react-dom"]


def test_listing_pages_through_the_most_mentioned(chain):
    first = chain.graph_query(limit=2)
    second = chain.graph_query(limit=2, offset=2)
    last = chain.graph_query(limit=2, offset=4)

    assert ids(first)[0] == "file:src/a.py"
    assert first.truncated and second.truncated and not last.truncated
    assert len({*ids(first), *ids(second), *ids(last)}) == 5
    assert ids(chain.graph_query(kind="library")) == ["library:httpx"]


def test_a_query_never_returns_more_than_the_limit_bound(store):
    store.write_fragment_graph(delta_of(*[("concept", f"c{n:03}", "f") for n in range(250)]))

    found = store.graph_query(limit=10_000)
    assert len(found.nodes) == MAX_LIMIT and found.truncated


def test_a_walk_follows_only_the_strongest_edges_of_a_hub(store):
    spokes = [("concept", f"spoke {n:03}", "f") for n in range(NEIGHBOURS_PER_NODE + 30)]
    store.write_fragment_graph(
        delta_of(
            ("file", "hub.py", "f"),
            *spokes,
            relations=[("hub.py", name, "related_to", "f") for _, name, _ in spokes],
        )
    )

    found = store.graph_query(start="file:hub.py", depth=1, limit=MAX_LIMIT)
    assert len(found.nodes) <= 2 * NEIGHBOURS_PER_NODE + 1
    assert found.truncated


# -- query plans --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "params"),
    [
        (sqlite_graph.NODE_BY_REF, ("file", "src/a.py")),
        (sqlite_graph.TOP_NODES, (50, 0)),
        (sqlite_graph.NODES_OF_KIND, ("file", 50, 0)),
        (sqlite_graph.KEYS_STARTING, ("sr", "sr\U0010ffff", 2000)),
        (sqlite_graph.NAMES_CONTAINING, ('"auth"', 2000)),
        (sqlite_graph.EDGES_OUT, (1, 50)),
        (sqlite_graph.EDGES_IN, (1, 50)),
        (sqlite_graph.nodes_by_id_query(3), (1, 2, 3)),
        (sqlite_graph.EVENTS_BEFORE, ("s1", 10, 200)),
        (sqlite_graph.NODE_MEMBERS_OF, ("f1",)),
        (sqlite_graph.EDGE_MEMBERS_OF, ("f1",)),
    ],
)
def test_graph_queries_use_an_index_not_a_table_scan(tmp_path, query, params):
    SQLiteStore(tmp_path / "m.db").close()
    conn = sqlite3.connect(tmp_path / "m.db")
    steps = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {query}", params)]
    assert not any("TEMP B-TREE" in step for step in steps), steps
    for step in steps:
        if step.startswith("SCAN") and "VIRTUAL TABLE" in step:
            assert ":M" in step, steps  # an FTS5 MATCH, answered by its own index
        elif step.startswith("SCAN"):
            assert "USING" in step and "INDEX" in step, steps
        else:
            assert "USING" in step or step.startswith("LIST SUBQUERY"), steps


def test_the_strongest_edges_are_kept_when_a_cap_cuts_them(store, monkeypatch):
    monkeypatch.setattr(graph_queries, "EDGE_CAP", 3)
    # Weak edges first in key order (low node ids), the strong ones last.
    spokes = [f"s{n:02}.py" for n in range(8)]
    mentions = [("file", "hub.py", "f0"), *[("file", s, "f0") for s in spokes]]
    for weight in range(1, 9):
        store.write_fragment_graph(
            delta_of(
                *mentions,
                relations=[
                    ("hub.py", s, "depends_on", f"f{weight}")
                    for n, s in enumerate(spokes)
                    if n + 1 >= weight  # spoke n gets weight n + 1
                ],
            )
        )

    found = store.graph_query(start="file:hub.py", depth=1, limit=MAX_LIMIT)
    assert [e.weight for e in found.edges] == [8, 7, 6]
    assert found.truncated


def test_sessions_behind_their_graph_are_found_quietest_first(store, memory):
    for name in ("early", "done", "late", "unsummarized"):  # received in this order
        memory.observe_many(conversation(name, [read(f"{ROOT}/src/{name}.py")]))
        time.sleep(0.01)
    for name in ("early", "done", "late"):  # the graph catches up to the summary
        memory.pipeline.summarize_session(name)
    while extract_session_graph(store, "done", limit=100):
        pass

    assert store.sessions_behind_graph(limit=10) == ["early", "late"]
    assert store.sessions_behind_graph(limit=1) == ["early"]

    store.reset_graph()
    assert store.sessions_behind_graph(limit=10) == ["early", "done", "late"]


def test_sessions_behind_their_graph_are_found_through_an_index(tmp_path):
    SQLiteStore(tmp_path / "m.db").close()
    conn = sqlite3.connect(tmp_path / "m.db")
    plan = [
        row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sqlite_graph.SESSIONS_BEHIND}", (10,))
    ]
    assert any("sessions_graph_behind" in step for step in plan), plan
    assert not any("TEMP B-TREE" in step for step in plan), plan


def test_edges_among_nodes_are_looked_up_pair_by_pair_then_sorted(tmp_path):
    """The sort is over what the key lookups found: at most (nodes)² pairs, never a scan."""
    SQLiteStore(tmp_path / "m.db").close()
    conn = sqlite3.connect(tmp_path / "m.db")
    query = sqlite_graph.edges_among_query(3)
    steps = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {query}", (1, 2, 3) * 2 + (9,))]
    assert steps == [
        "SEARCH graph_edges USING PRIMARY KEY (src=? AND dst=?)",
        "USE TEMP B-TREE FOR ORDER BY",
    ]
