"""How Memory's parts fit: the pipeline works from what it is handed, and a server's
background threads start and stop in one place."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from memvault import Memory
from memvault.config import Settings
from memvault.domain import BoardRow
from memvault.pipeline.service import Pipeline
from memvault.store import Store
from memvault.vault.lifecycle import Report
from memvault.vault.remember import DerivedFragment, Draft
from tests.pipeline.test_service import step, work

SERVER_THREADS = {
    "memvault-board",
    "memvault-index",
    "memvault-vault-watch",
    "memvault-worker",
    "memvault-spool",
}


def a_fix(session: str, start: int = 0) -> list[dict]:
    """A failure, its cause and its fix: a session worth a fragment."""
    deploy = {"tool_name": "Bash", "tool_input": {"command": "bash scripts/deploy.sh"}}
    steps = [
        ("prompt_submit", {"prompt": "The deploy script fails, fix it"}),
        ("post_tool_failure", {**deploy, "error": "deploy.sh: line 12: rsync: command not found"}),
        (
            "assistant_response",
            {"assistantResponse": "The CI image has no rsync. We decided to use scp instead."},
        ),
        (
            "post_tool_use",
            {
                "tool_name": "Edit",
                "tool_input": {"file_path": "/code/demo-app/scripts/deploy.sh"},
                "tool_output": "ok",
            },
        ),
        ("post_tool_use", {**deploy, "tool_output": "deployed"}),
    ]
    return [step(session, start + n, hook, data) for n, (hook, data) in enumerate(steps)]


@dataclass
class Parts:
    """The pipeline's sources as plain values: no Memory to call back into."""

    store: Store
    settings: Settings
    memory: Memory
    written: list[Draft] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    graphed: list[Path] = field(default_factory=list)

    def remember_derived(self, draft: Draft) -> DerivedFragment:
        self.written.append(draft)
        return self.memory.fragments.remember_derived(draft)

    def update_derived(self, board_session_id: str, content, **fields) -> Report:
        self.updated.append(board_session_id)
        return self.memory.board.update_derived(board_session_id, content, **fields)

    def board_row(self, board_session_id: str) -> BoardRow | None:
        return self.memory.board.row(board_session_id)

    def graph_fragment(self, path: Path) -> None:
        self.graphed.append(path)

    def supersede(self, older: str, newer: str) -> bool:
        return self.memory.fragments.supersede(older, newer)

    def rewritten(self) -> None:
        self.memory.index.wake()


def test_the_pipeline_feeds_the_board_and_writes_fragments_through_the_parts_it_is_handed(
    memory,
):
    started = memory.context.start_session({"sessionId": "s1", "project": "demo-app", "cwd": "/c"})
    memory.observe_many(work("s1", start=1) + a_fix("s1", start=10))
    parts = Parts(memory.store, memory.settings, memory)
    pipeline = Pipeline(parts, offline=True)
    try:
        assert pipeline.summarize_session("s1") is not None
        row = memory.board.row_in_file(started.board.session_id)
        assert row.status == "active"
        text = memory.board.snapshot_text(started.board.session_id)
        assert row.summary.strip() and row.summary.strip() in text
        assert parts.updated == [started.board.session_id]
        written = pipeline.extract_session("s1")
        assert written and len(parts.written) == len(written)
        assert all(r.path.is_file() for r in written)
        assert pipeline.graph_fragments() == len(parts.graphed) == len(written)
    finally:
        pipeline.close()


def _server_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name in SERVER_THREADS]


def test_a_server_s_background_threads_start_and_stop_in_one_place(tmp_path):
    before = set(_server_threads())
    with Memory.open(home=tmp_path / "home", board_poll_seconds=0.05) as memory:
        memory.serving.start()
        started = [t for t in _server_threads() if t not in before]
        assert sorted(t.name for t in started) == sorted(SERVER_THREADS)
        memory.serving.start()  # a second start starts nothing more
        assert len([t for t in _server_threads() if t not in before]) == len(started)
        memory.serving.stop()
        assert not [t for t in started if t.is_alive()]


def test_a_server_without_its_own_worker_runs_the_other_threads(tmp_path):
    before = set(_server_threads())
    with Memory.open(home=tmp_path / "home", worker_in_server=False) as memory:
        memory.serving.start()
        started = {t.name for t in _server_threads() if t not in before}
        assert started == SERVER_THREADS - {"memvault-worker"}
    assert not [t for t in _server_threads() if t not in before]  # close stops them too
