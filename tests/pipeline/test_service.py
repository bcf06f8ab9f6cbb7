"""The pipeline over a real store and vault: watermarks, signals, the board feed."""

from __future__ import annotations

import time

import pytest

from memvault import Memory
from memvault.derive.fragments import extract_fragments
from memvault.vault.remember import Draft


def step(session: str, n: int, hook: str, data: dict, project: str = "demo-app") -> dict:
    return {
        "hookType": hook,
        "sessionId": session,
        "project": project,
        "cwd": "/code/demo-app",
        "timestamp": f"2026-11-30T09:{n // 60:02d}:{n % 60:02d}.000Z",
        "eventId": f"{session}-{n}",
        "data": data,
    }


def work(session: str, start: int = 0) -> list[dict]:
    return [
        step(session, start, "prompt_submit", {"prompt": "Fix the failing login test"}),
        step(
            session,
            start + 1,
            "post_tool_use",
            {
                "tool_name": "Edit",
                "tool_input": {"file_path": "/code/demo-app/src/login.py"},
                "tool_output": "ok",
            },
        ),
        step(
            session,
            start + 2,
            "post_tool_use",
            {
                "tool_name": "Bash",
                "tool_input": {"command": "pytest tests/test_login.py"},
                "tool_output": "3 passed",
            },
        ),
        step(
            session,
            start + 3,
            "assistant_response",
            {"assistantResponse": "Fixed: we decided to use bcrypt instead of md5."},
        ),
    ]


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home") as opened:
        yield opened


def test_a_run_handles_only_what_is_past_the_watermark(memory):
    memory.observe_many(work("s1"))
    first = memory.pipeline.summarize_session("s1")
    assert first is not None and "src/login.py" in " ".join(first.files)
    session = memory.reads.session("s1")
    assert session.summary_revision == 1 and session.summarized_observation_count == 4
    assert memory.pipeline.summarize_session("s1") is None  # nothing new
    memory.observe_many(work("s1", start=10)[:1])  # one more prompt
    assert memory.pipeline.summarize_session("s1") is not None
    session = memory.reads.session("s1")
    assert session.summary_revision == 2 and session.summarized_observation_count == 5


def test_a_late_event_on_an_old_session_is_summarized(memory):
    memory.observe_many(work("s1", start=30))
    memory.pipeline.summarize_session("s1")
    late = step("s1", 1, "prompt_submit", {"prompt": "Also document the auth flow"})
    memory.observe(late)  # dated before everything summarized so far
    summary = memory.pipeline.summarize_session("s1")
    assert summary is not None
    assert memory.reads.session("s1").summarized_observation_count == 5


def test_a_failed_run_does_not_move_the_watermark(memory):
    memory.context.start_session({"sessionId": "s1", "project": "demo-app", "cwd": "/c"})
    memory.observe_many(work("s1"))
    index = memory.board.index_path
    text = index.read_text()
    index.unlink()
    index.mkdir()  # the board cannot be read: the board feed fails
    with pytest.raises(OSError):
        memory.pipeline.summarize_session("s1")
    assert memory.reads.session("s1").summary_revision == 0
    assert memory.reads.session("s1").summarized.seq is None
    index.rmdir()
    index.write_text(text)
    assert memory.pipeline.summarize_session("s1") is not None


def test_the_summary_feeds_the_board_and_promotes_only_real_work(memory):
    started = memory.context.start_session(
        {"sessionId": "chat", "project": "demo-app", "cwd": "/c"}
    )
    board_id = started.board.session_id
    memory.observe(step("chat", 0, "prompt_submit", {"prompt": "hello there"}))
    memory.pipeline.summarize_session("chat")
    assert memory.board.row_in_file(board_id).status == "idle"  # a greeting is not work
    memory.observe_many(work("chat", start=1))
    memory.pipeline.summarize_session("chat")
    row = memory.board.row_in_file(board_id)
    assert row.status == "active"
    text = memory.board.snapshot_text(board_id)
    assert row.summary.strip() and row.summary.strip() in text
    assert "bcrypt" in text


def test_a_queued_job_is_not_queued_twice_and_the_worker_runs_it(memory):
    memory.observe_many(work("s1"))
    assert memory.pipeline.request_summary("s1")
    assert not memory.pipeline.request_summary("s1")
    assert memory.pipeline.worker.drain() == 3  # the summary, then the extraction and graph
    assert memory.reads.session_summary("s1")["files"]


def test_threshold_idle_and_an_all_day_conversation_with_real_time(tmp_path):
    knobs = {
        "summary_threshold_observations": 5,
        "idle_threshold_ms": 1500,
        "sweep_interval_ms": 500,
    }
    with Memory.open(home=tmp_path / "h", **knobs) as memory:
        memory.serving.start_pipeline()
        # Idle: two events, then quiet.
        memory.observe_many(work("quiet")[:2])
        # All day: keeps posting and still gets summarized, more than once.
        deadline = time.monotonic() + 6
        n = 0
        while time.monotonic() < deadline:
            memory.observe(step("busy", n, "prompt_submit", {"prompt": f"step {n} of the day"}))
            n += 1
            time.sleep(0.1)
        assert memory.reads.session("busy").summary_revision >= 2
        assert memory.reads.session("quiet").summary_revision == 1


def test_a_sessions_lessons_become_fragments_once_even_when_the_run_repeats(memory):
    steps = [
        ("prompt_submit", {"prompt": "部署脚本在 CI 上失败了，帮我看看"}),
        (
            "post_tool_failure",
            {
                "tool_name": "Bash",
                "tool_input": {"command": "bash scripts/deploy.sh"},
                "error": "scripts/deploy.sh: line 12: rsync: command not found",
            },
        ),
        (
            "assistant_response",
            {
                "assistantResponse": (
                    "原因是 CI 镜像里没有安装 rsync。我们决定改用 scp 上传构建产物。"
                )
            },
        ),
        (
            "post_tool_use",
            {
                "tool_name": "Edit",
                "tool_input": {"file_path": "/code/demo-app/scripts/deploy.sh"},
                "tool_output": "ok",
            },
        ),
        (
            "post_tool_use",
            {
                "tool_name": "Bash",
                "tool_input": {"command": "bash scripts/deploy.sh"},
                "tool_output": "deployed",
            },
        ),
    ]
    memory.observe_many([step("zh", n, hook, data) for n, (hook, data) in enumerate(steps)])
    memory.pipeline.request_summary("zh")
    assert memory.pipeline.worker.drain() == 3  # the summary, then extraction and graph
    folder = memory.settings.fragments_path
    written = sorted(p.name for p in folder.glob("*.md"))
    assert written and any("scp" in (folder / name).read_text() for name in written)
    # The same events again (a crash before the watermark moved): merged, not duplicated.
    events = memory.store.events_after("zh", 0, limit=100)
    observations = memory.store.observations_of([e.seq for e in events])
    for draft in extract_fragments(events, observations, project="demo-app"):
        assert memory.remember(draft).action == "merged"
    assert sorted(p.name for p in folder.glob("*.md")) == written
    # Nothing new past the watermark: nothing more is written.
    assert memory.pipeline.extract_session("zh") == []


def test_the_snapshot_keeps_one_current_context_and_stale_rows_wake_only_for_work(memory):
    started = memory.context.start_session(
        {"sessionId": "long", "project": "demo-app", "cwd": "/c"}
    )
    board_id = started.board.session_id
    for turn in range(4):
        memory.observe_many(work("long", start=10 * turn))
        memory.pipeline.summarize_session("long")
    text = memory.board.snapshot_text(board_id)
    context = text.split("## Current Context", 1)[1].split("\n## ", 1)[0]
    assert len([p for p in context.split("\n\n") if p.strip()]) == 1
    index = memory.board.index_path  # the row went stale (as organize would, days later)
    index.write_text(index.read_text().replace("| active |", "| stale |"))
    memory.observe(step("long", 99, "notification", {"message": "permission asked"}))
    memory.pipeline.summarize_session("long")
    assert memory.board.row_in_file(board_id).status == "stale"  # no work in the new events
    memory.observe_many(work("long", start=100))
    memory.pipeline.summarize_session("long")
    assert memory.board.row_in_file(board_id).status == "active"  # real work wakes it


def test_a_stopped_pipeline_starts_again(memory):
    memory.serving.start_pipeline()
    memory.serving.stop_pipeline()
    memory.serving.start_pipeline()
    memory.observe_many(work("again"))
    memory.pipeline.request_summary("again")
    deadline = time.monotonic() + 10
    while memory.reads.session("again").summary_revision == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert memory.reads.session("again").summary_revision == 1


def test_after_a_graph_reset_the_worker_fills_it_again(memory):
    memory.observe_many(work("s1"))
    memory.pipeline.request_summary("s1")
    memory.pipeline.worker.drain()
    memory.remember(
        Draft(project="demo-app", summary="Deploys go through CI.", facts=["file: ci.yml"])
    )
    before = memory.store.graph_stats()
    assert before.total_nodes > 0
    memory.store.reset_graph()
    memory.pipeline.regraph_fragments()
    assert memory.store.graph_stats().total_nodes == 0
    memory.pipeline.signals()  # the session's graph is behind its summary now
    memory.pipeline.worker.drain()
    assert memory.store.graph_stats() == before


def test_a_forgotten_fragment_leaves_the_graph(memory):
    written = memory.remember(
        Draft(project="demo-app", summary="Deploys go through CI.", facts=["file: ci.yml"])
    )
    assert "file:ci.yml" in {n.id for n in memory.store.graph_query(text="ci.yml").nodes}
    folder = memory.settings.fragments_path
    memory.fragments.forget(written.path.relative_to(folder).with_suffix("").as_posix())
    assert memory.store.graph_query(text="ci.yml").nodes == []
