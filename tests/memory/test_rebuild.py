"""`memvault rebuild`: everything derived comes back from the raw log as live processing made
it, and what agents and people wrote stays."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memvault import Memory
from memvault.vault.remember import Draft
from tests.helpers import Server
from tests.pipeline.test_service import step, work

FIX = [
    ("prompt_submit", {"prompt": "The deploy script fails on CI, please look"}),
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
                "The root cause is that the CI image has no rsync. "
                "We decided to install rsync in the CI image instead of copying with scp."
            )
        },
    ),
    (
        "post_tool_use",
        {
            "tool_name": "Edit",
            "tool_input": {"file_path": "/code/demo-app/.ci/Dockerfile"},
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


def live(memory: Memory) -> None:
    """Two sessions processed the way the worker processes them, a turn at a time."""
    memory.context.start_session(
        {"sessionId": "s1", "project": "demo-app", "cwd": "/code/demo-app"}
    )
    for start in (0, 10, 20):
        memory.observe_many(work("s1", start=start))
        memory.pipeline.request_summary("s1")
        memory.pipeline.worker.drain()
    memory.observe_many([step("s2", n, hook, data) for n, (hook, data) in enumerate(FIX)])
    memory.pipeline.request_summary("s2")
    memory.pipeline.worker.drain()


def state(memory: Memory) -> dict:
    folder = memory.settings.fragments_path
    return {
        # Keywords as a set: a live summary keeps earlier keywords in place (a board row's
        # keywords should not churn), one made at once ranks them by weight.
        "summaries": {
            s: {**summary, "keywords": sorted(summary["keywords"])}
            for s in ("s1", "s2")
            if (summary := memory.reads.session_summary(s)) is not None
        },
        "fragments": {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.md"))},
        "graph": memory.store.graph_stats(),
        "observations": [o.title for s in ("s1", "s2") for o in memory.reads.observations(s)],
        "search": [h.document.key for h in memory.search("rsync deploy", limit=5)],
        "snapshot": memory.board.snapshot_text(memory.reads.session("s1").board_session_id),
    }


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home") as opened:
        yield opened


def test_a_rebuild_gives_what_live_processing_gave(memory):
    live(memory)
    before = state(memory)
    assert before["fragments"] and before["graph"].total_nodes and before["summaries"]["s1"]
    report = memory.rebuild.run()
    assert report.sessions == 2 and report.events == 17 and report.observations_changed == 0
    assert report.fragments_removed == len(before["fragments"]) == report.fragments_written
    assert state(memory) == before


def test_what_agents_and_people_wrote_is_kept(memory):
    live(memory)
    agent = memory.remember(
        Draft(project="demo-app", summary="Releases go out on Tuesdays.", facts=["day: Tuesday"])
    )
    pipeline_written = sorted(
        p for p in memory.settings.fragments_path.glob("*.md") if p != agent.path
    )
    edited = pipeline_written[0]
    edited.write_text(edited.read_text(encoding="utf-8") + "- checked by hand: yes\n")
    report = memory.rebuild.run()
    assert report.fragments_kept == 1
    assert agent.path.read_text(encoding="utf-8").count("day: Tuesday") == 1
    assert "checked by hand: yes" in edited.read_text(encoding="utf-8")
    # The edited file is a person's now: a second rebuild leaves it alone too.
    again = memory.rebuild.run()
    assert again.fragments_kept == 0 and "checked by hand" in edited.read_text(encoding="utf-8")


def test_an_observation_changed_in_place_comes_back_as_the_log_says(memory):
    live(memory)
    observation = memory.reads.observations("s1")[1]
    from memvault.domain import ObservationDraft, Watermark

    upgraded = ObservationDraft(
        type=observation.type, title="Something else entirely", narrative="Not from the log."
    )
    memory.store.upgrade_observations(
        "s1", [(observation.event_seq, upgraded)], derived_by="llm:x:y", through=Watermark("", 1)
    )
    assert memory.reads.observations("s1")[1].title == "Something else entirely"
    report = memory.rebuild.run()
    assert report.observations_changed == 1
    restored = memory.reads.observations("s1")[1]
    assert restored.title == observation.title and restored.derived_by == "synthetic"
    assert memory.search("Something else entirely", kinds=["observation"]) == []


def test_the_command_refuses_while_a_server_answers_and_reports_otherwise(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home=home) as memory:
        live(memory)
    server = Server(home).start()
    env = {**server.env, "MEMVAULT_PORT": str(server.port)}
    try:
        refused = subprocess.run(
            [sys.executable, "-m", "memvault.cli", "rebuild"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.stop()
    assert refused.returncode == 1 and "stop it" in refused.stderr
    done = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "rebuild", "--json"],
        env={**os.environ, "MEMVAULT_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["sessions"] == 2 and report["events"] == 17


def test_forgotten_fragments_stay_forgotten(memory):
    live(memory)
    folder = memory.settings.fragments_path
    about_rsync = [p for p in folder.glob("*.md") if "rsync" in p.read_text("utf-8")]
    assert about_rsync
    for path in about_rsync:
        memory.fragments.forget(path.relative_to(folder).with_suffix("").as_posix())
    memory.rebuild.run()
    assert not any("rsync" in p.read_text("utf-8") for p in folder.glob("*.md"))
    memory.observe(step("s2", 40, "prompt_submit", {"prompt": "thanks"}))
    memory.pipeline.extract_session("s2")  # a later run over the session brings none back
    assert not any(p.exists() for p in about_rsync)
