"""The vault's owner on SQLite: the one server, which watches the board and runs the
pipeline however it was first asked who owns the vault."""

from __future__ import annotations

from memvault import Memory


def test_a_server_asked_for_its_health_before_it_starts_still_watches_and_runs_the_pipeline(
    tmp_path,
):
    memory = Memory.open(home=tmp_path / "home", embeddings="none", llm="none")
    try:
        assert memory.health.report().vault_owner is True  # asks who owns the vault first
        memory.serving.start()
        assert memory.serving.board_watcher is not None and memory.serving.pipeline_running
        assert memory.owner.claim.running
    finally:
        memory.close()
    assert memory.serving.board_watcher is None and not memory.serving.pipeline_running


def test_writes_on_sqlite_are_written_in_place_and_nothing_is_queued(tmp_path):
    with Memory.open(home=tmp_path / "home", embeddings="none", llm="none") as memory:
        report = memory.board.register_session(topic="In place")
        assert report.ok and "In place" in memory.board.index_path.read_text()
        assert memory.store.vault_writes_waiting() == 0
        assert memory.store.vault_writes_due() == []
