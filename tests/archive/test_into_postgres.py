"""Moving a SQLite memory into PostgreSQL with export and import: the same events, the same
vault files, and once indexed and derived, the same search, board and fragments."""

from __future__ import annotations

import io

import pytest

from tests.helpers import IN_CI

if not IN_CI:  # without the postgres extra, a skip here; CI must run every test
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

from memvault import Memory
from memvault.archive import import_stream
from tests.archive.conftest import events, export_bytes, files


@pytest.fixture
def on_postgres(tmp_path, postgres_cluster):
    url = postgres_cluster.database()
    with Memory.open(home=tmp_path / "on-postgres", store_location=url) as memory:
        assert memory.store.engine == "postgres"
        yield memory


def shown(memory: Memory) -> dict:
    """What a person sees: search hits, the board, the fragments, the summaries, the graph
    and the sessions."""
    memory.pipeline.worker.drain()
    memory.index.index_now(vectors=False)
    found = {}
    for query in ("rsync", "deploy staging", "release tag main", "bcrypt login"):
        hits = memory.search(query, limit=10)
        found[query] = [
            (hit.document.kind, hit.document.key, round(hit.relevance, 4)) for hit in hits
        ]
    return {
        "search": found,
        "board": [
            (row.session_id, row.topic, row.summary, row.status)
            for row in memory.store.board_rows(limit=1000)
        ],
        "fragments": sorted(
            (doc.key, doc.archived, doc.title)
            for archived in (False, True)
            for doc in memory.store.list_documents(
                "fragment", include_archived=archived, limit=1000
            )
        ),
        "summaries": {s: memory.reads.session_summary(s) for s in ("s1", "s2")},
        "counts": memory.store.fragment_counts(),
        "graph": memory.store.graph_stats(),
        "sessions": sorted((s.id, s.project, s.board_session_id) for s in memory.reads.sessions()),
    }


def test_a_sqlite_memory_moved_into_postgres_shows_what_it_shows_moved_into_sqlite(
    source, target, on_postgres
):
    """Imported into PostgreSQL, an export holds the same events and files as its source,
    and once indexed and derived again shows what the same import into SQLite shows (the
    re-derived summaries and snapshots are the import's, on either engine)."""
    data = export_bytes(source)
    for memory in (target, on_postgres):
        report = import_stream(memory, io.BytesIO(data))
        assert report.complete and report.problem_count == 0
        assert events(memory) == events(source)
        assert files(memory.settings.vault_path) == files(source.settings.vault_path)

    on_sqlite, moved = shown(target), shown(on_postgres)
    for query, hits in on_sqlite["search"].items():
        assert hits, query
        assert moved["search"][query] == hits, query
    for part in ("board", "fragments", "summaries", "counts", "graph", "sessions"):
        assert moved[part] == on_sqlite[part], part


def test_a_memory_forgotten_before_the_move_is_not_learned_again_after_it(source, on_postgres):
    learned = sorted(source.store.pipeline_fragments())
    assert learned
    forgotten = source.store.document("fragment", learned[0])
    source.fragments.forget(source.recall.public_id(forgotten))

    import_stream(on_postgres, io.BytesIO(export_bytes(source)))
    on_postgres.pipeline.worker.drain()

    assert files(on_postgres.settings.fragments_path) == files(source.settings.fragments_path)
