"""A worker process killed in the middle of a job: the job is taken up again once its lease
runs out, and its output is written once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memvault import Memory
from tests.helpers import wait_for
from tests.llm.conftest import require_sdk
from tests.llm_server import LLMServer, Request
from tests.pipeline.test_llm_pipeline import SUMMARY, kind_of
from tests.pipeline.test_service import work

FRAGMENTS = {
    "fragments": [
        {
            "kind": "decision",
            "summary": "Passwords are hashed with bcrypt, not md5",
            "facts": ["hash: bcrypt ∵ md5 is broken for passwords"],
            "events": ["e4"],
        }
    ]
}


class Stalling:
    """Answers each task, except that the first call of each hangs until released, so a
    worker can be killed while it waits."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.waiting = {kind: threading.Event() for kind in ("summary", "fragments")}
        self.release = threading.Event()

    def __call__(self, request: Request) -> str:
        kind = kind_of(request)
        self.calls[kind] = self.calls.get(kind, 0) + 1
        if self.calls[kind] == 1:
            self.waiting[kind].set()
            self.release.wait(60)
        return json.dumps(SUMMARY if kind == "summary" else FRAGMENTS)


def start_worker(home: Path, server: LLMServer) -> subprocess.Popen:
    env = {
        **os.environ,
        "MEMVAULT_HOME": str(home),
        "MEMVAULT_LLM": "openai",
        "MEMVAULT_LLM_URL": server.base_url,
        "MEMVAULT_LLM_MODEL": "test-model",
        "MEMVAULT_LLM_API_KEY": "test-key",
        "MEMVAULT_JOB_LEASE_SECONDS": "2",
    }
    log = (home / "worker.log").open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "memvault.cli", "worker"], env=env, stdout=log, stderr=log
    )


def kill(process: subprocess.Popen) -> None:
    process.kill()
    process.wait(30)


@pytest.mark.slow
def test_a_killed_workers_job_is_retried_and_its_output_written_once(tmp_path):
    require_sdk("openai")
    home = tmp_path / "home"
    script = Stalling()
    with LLMServer() as server, Memory.open(home=home) as memory:
        server.respond = script
        memory.context.start_session({"sessionId": "s1", "project": "demo-app", "cwd": "/c"})
        memory.observe_many(work("s1"))
        memory.pipeline.request_summary("s1")

        first = start_worker(home, server)
        try:
            assert script.waiting["summary"].wait(30), "the worker never asked for a summary"
        finally:
            kill(first)  # killed while its summary call is in flight
        assert memory.reads.session("s1").summary_revision == 0

        second = start_worker(home, server)
        try:
            # The summary job comes back once the dead worker's lease has run out.
            wait_for(lambda: memory.reads.session("s1").summary_revision == 1, timeout=30)
            assert script.waiting["fragments"].wait(30), "no extraction after the summary"
        finally:
            kill(second)  # killed while its fragment call is in flight
        assert memory.reads.session("s1").extracted.seq is None

        script.release.set()
        third = start_worker(home, server)
        try:
            wait_for(lambda: memory.reads.session("s1").extracted.seq is not None, timeout=30)
        finally:
            kill(third)

        assert script.calls == {"summary": 2, "fragments": 2}
        session = memory.reads.session("s1")
        assert session.summary_revision == 1  # written once
        assert memory.reads.session_summary("s1")["current_context"] == SUMMARY["current_context"]
        fragments = sorted(memory.settings.fragments_path.glob("*.md"))
        assert len(fragments) == 1
        body = fragments[0].read_text(encoding="utf-8")
        assert body.count("hash: bcrypt") == 1
