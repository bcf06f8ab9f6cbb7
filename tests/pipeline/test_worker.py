"""The background worker over a real store: handlers, retries with backoff, giving up."""

from __future__ import annotations

import itertools
import time

import pytest

from memvault.pipeline.worker import Worker
from memvault.store.sqlite import SQLiteStore


@pytest.fixture
def store(tmp_path):
    opened = SQLiteStore(tmp_path / "memvault.db")
    yield opened
    opened.close()


def test_each_job_goes_to_the_handler_of_its_kind_once(store):
    seen = []
    worker = Worker(store, {"a": lambda job: seen.append(("a", job.payload["n"]))})
    for n in range(3):
        store.enqueue_job("a", {"n": n})
    store.enqueue_job("b", {"n": 9})  # no handler here: left for another worker
    assert worker.drain() == 3
    assert seen == [("a", 0), ("a", 1), ("a", 2)]
    assert store.stats().jobs_pending == 1


def test_a_failing_job_is_retried_with_backoff_and_then_given_up(store):
    attempts = []

    def flaky(job):
        attempts.append(time.monotonic())
        raise RuntimeError("model unavailable")

    worker = Worker(store, {"a": flaky}, retry_base_seconds=0.1, max_attempts=3)
    store.enqueue_job("a", {})
    deadline = time.monotonic() + 5
    while store.stats().jobs_failed == 0 and time.monotonic() < deadline:
        worker.run_once()
        time.sleep(0.02)
    assert len(attempts) == 3
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    assert gaps[0] >= 0.1 and gaps[1] >= 0.2  # 0.1 s, then 0.2 s
    assert store.stats().jobs_failed == 1


def test_a_running_worker_picks_up_new_jobs_when_nudged(store):
    done = []
    worker = Worker(store, {"a": lambda job: done.append(job.id)}, poll_seconds=30)
    worker.start()
    try:
        store.enqueue_job("a", {})
        worker.nudge()
        deadline = time.monotonic() + 5
        while not done and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(done) == 1
    finally:
        worker.stop()
