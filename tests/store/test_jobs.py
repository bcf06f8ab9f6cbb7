"""The job queue: durable, deduplicated, leased; what every engine must do."""

from __future__ import annotations

import threading
import time

import pytest


def test_a_job_is_claimed_once_and_finished(store):
    assert store.enqueue_job("summarize", {"sessionId": "s1"}, dedupe_key="s1")
    job = store.claim_job("w1", ["summarize"], lease_seconds=60)
    assert job.payload == {"sessionId": "s1"} and job.attempts == 1 and job.claimed_by == "w1"
    assert store.claim_job("w2", ["summarize"], lease_seconds=60) is None
    assert store.finish_job(job)
    assert store.claim_job("w2", ["summarize"], lease_seconds=60) is None
    assert store.stats().jobs_pending == 0


def test_a_live_job_with_the_same_key_is_not_queued_twice(store):
    assert store.enqueue_job("summarize", {}, dedupe_key="s1")
    assert not store.enqueue_job("summarize", {}, dedupe_key="s1")
    assert store.enqueue_job("extract", {}, dedupe_key="s1")  # another kind
    job = store.claim_job("w", ["summarize"], lease_seconds=60)
    # While it runs, a new request queues one more run (what arrived meanwhile needs it)...
    assert store.enqueue_job("summarize", {}, dedupe_key="s1")
    assert not store.enqueue_job("summarize", {}, dedupe_key="s1")  # ...but only one
    store.finish_job(job)
    assert store.enqueue_job("summarize", {}) and store.enqueue_job("summarize", {})  # no key


def test_only_due_jobs_of_the_asked_kinds_are_claimed(store):
    store.enqueue_job("later", {}, run_after="2999-01-01T00:00:00.000Z")
    store.enqueue_job("other", {})
    assert store.claim_job("w", ["later", "summarize"], lease_seconds=60) is None
    assert store.claim_job("w", ["other"], lease_seconds=60).kind == "other"


def test_a_crashed_workers_job_is_claimed_again_when_its_lease_runs_out(store):
    store.enqueue_job("summarize", {"n": 1})
    # A lease long enough that the next claim comes inside it on a busy machine too.
    lost = store.claim_job("dead", ["summarize"], lease_seconds=1.5)
    assert store.claim_job("w2", ["summarize"], lease_seconds=60) is None
    time.sleep(1.6)
    taken = store.claim_job("w2", ["summarize"], lease_seconds=60)
    assert taken.id == lost.id and taken.attempts == 2
    assert not store.finish_job(lost)  # the dead worker's late answer is not kept
    assert store.finish_job(taken)


def test_a_failure_is_retried_later_or_given_up(store):
    store.enqueue_job("summarize", {})
    job = store.claim_job("w", ["summarize"], lease_seconds=60)
    assert store.fail_job(job, "boom", retry_in=0.2)
    assert store.claim_job("w", ["summarize"], lease_seconds=60) is None
    time.sleep(0.3)
    again = store.claim_job("w", ["summarize"], lease_seconds=60)
    assert again.attempts == 2
    assert store.fail_job(again, "boom again", retry_in=None)
    assert store.stats().jobs_failed == 1
    assert store.claim_job("w", ["summarize"], lease_seconds=60) is None


def test_jobs_survive_a_restart(open_store):
    first = open_store()
    first.enqueue_job("summarize", {"sessionId": "kept"})
    first.close()
    job = open_store().claim_job("w", ["summarize"], lease_seconds=60)
    assert job.payload == {"sessionId": "kept"}


def test_concurrent_workers_never_claim_the_same_job(store):
    for n in range(40):
        store.enqueue_job("work", {"n": n})
    claimed: list[int] = []
    lock = threading.Lock()

    def work(name):
        while (job := store.claim_job(name, ["work"], lease_seconds=60)) is not None:
            with lock:
                claimed.append(job.payload["n"])
            store.finish_job(job)

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(claimed) == list(range(40))


def test_finished_jobs_are_pruned_by_age(store):
    store.enqueue_job("a", {})
    store.finish_job(store.claim_job("w", ["a"], lease_seconds=60))
    store.enqueue_job("a", {})  # pending: kept whatever its age
    assert store.prune_jobs("2000-01-01T00:00:00.000Z") == 0
    assert store.prune_jobs("2999-01-01T00:00:00.000Z") == 1
    assert store.claim_job("w", ["a"], lease_seconds=60) is not None


@pytest.mark.sqlite_only
def test_a_claim_reads_one_index_range_not_every_queued_job(tmp_path):
    """With a backlog queued, a claim must not sort the whole queue: it ran inside every
    write of the server's worker, and its cost grew with the backlog."""
    import sqlite3

    from memvault.store.sqlite import SQLiteStore
    from memvault.store.sqlite.jobs import claim

    store = SQLiteStore(tmp_path / "jobs.db")
    for n in range(50):
        store.enqueue_job("summarize", {"n": n}, dedupe_key=f"s{n}")
    store.close()
    conn = sqlite3.connect(tmp_path / "jobs.db", isolation_level=None)
    plans: list[str] = []

    def explain(sql: str) -> None:
        if "FROM jobs" in sql:
            plans.append(sql)

    conn.set_trace_callback(explain)
    now = "2999-01-01T00:00:00.000Z"
    job = claim(conn, "w", ["summarize", "extract"], now=now, lease_until=now)
    conn.set_trace_callback(None)
    assert job is not None and job.payload == {"n": 0}
    assert plans
    for sql in plans:
        plan = " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
        assert "TEMP B-TREE" not in plan and "SCAN jobs" not in plan, plan
