"""Jobs on one PostgreSQL database shared by replicas and `memvault worker` processes:
each runs once, a killed replica's claim runs out and the job runs once more, its output
written once."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter

import httpx
import psycopg
import pytest

from tests.helpers import wait_for
from tests.llm.conftest import require_sdk
from tests.llm_server import LLMServer, Request
from tests.pipeline.test_llm_pipeline import SUMMARY, kind_of
from tests.pipeline.test_service import work
from tests.replicas.conftest import replica, worker_process

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


def llm_env(server: LLMServer, **more: str) -> dict[str, str]:
    return {
        "MEMVAULT_LLM": "openai",
        "MEMVAULT_LLM_URL": server.base_url,
        "MEMVAULT_LLM_MODEL": "test-model",
        "MEMVAULT_LLM_API_KEY": "test-key",
        **more,
    }


def one(database: str, sql: str, params: tuple = ()) -> tuple | None:
    with psycopg.connect(database) as conn:
        return conn.execute(sql, params).fetchone()


def rows(database: str, sql: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(database) as conn:
        return conn.execute(sql, params).fetchall()


def post_work(url: str, session: str) -> None:
    answer = httpx.post(
        f"{url}/agentmemory/observe/bulk", json={"observations": work(session)}, timeout=30
    )
    assert answer.status_code == 200 and answer.json()["failed"] == 0, answer.text
    summarize = httpx.post(f"{url}/agentmemory/summarize", json={"sessionId": session}, timeout=30)
    assert summarize.status_code < 300, summarize.text


class StallFirstSummary:
    """Answers every task; the first summary call hangs until released, so the replica
    that made it can be killed while it waits."""

    def __init__(self) -> None:
        self.calls: Counter = Counter()
        self.waiting = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: Request) -> str:
        kind = kind_of(request)
        self.calls[kind] += 1
        if kind == "summary" and self.calls[kind] == 1:
            self.waiting.set()
            self.release.wait(60)
        return json.dumps(SUMMARY if kind == "summary" else FRAGMENTS)


@pytest.mark.slow
def test_a_killed_replicas_job_runs_once_more_on_the_other_and_its_output_is_written_once(
    postgres_cluster, tmp_path, launch
):
    require_sdk("openai")
    database = postgres_cluster.database()
    vault = tmp_path / "vault"
    vault.mkdir()
    script = StallFirstSummary()
    with LLMServer() as llm:
        llm.respond = script
        env = llm_env(llm, MEMVAULT_JOB_LEASE_SECONDS="2", MEMVAULT_VAULT=str(vault))
        servers = [launch(replica(tmp_path / name, database, env)) for name in ("a", "b")]
        try:
            post_work(servers[0].url, "s1")
            assert script.waiting.wait(30), "no replica asked for a summary"
            job_id, claimed_by = one(
                database,
                "SELECT id, claimed_by FROM jobs WHERE kind = 'summarize' AND state = 'running'",
            )
            pid = int(claimed_by.split(":")[1])
            (claimer,) = [s for s in servers if s.process.pid == pid]
            (other,) = [s for s in servers if s is not claimer]
            claimer.kill()  # SIGKILL while its summary call is in flight

            def extracted():
                """the other replica summarized and extracted the session"""
                return one(database, "SELECT extracted_seq FROM sessions WHERE id = 's1'")[0]

            wait_for(extracted, timeout=30)

            def taken_again():
                """the dead replica's claim ran out, its job ran again, and no job is left"""
                return rows(database, "SELECT id FROM jobs WHERE state <> 'done'") == [] and one(
                    database, "SELECT state FROM jobs WHERE id = %s", (job_id,)
                ) == ("done",)

            wait_for(taken_again, timeout=30)
            script.release.set()
            assert other.process.poll() is None
        finally:
            script.release.set()
            for running in servers:
                running.kill()

    assert script.calls["summary"] == 2 and script.calls["fragments"] == 1
    # The claimed job ran twice (the dead replica's attempt, then the other's) and finished
    # once. The other replica runs the pipeline once it owns the vault, and its first round
    # may queue the session's summary anew before the lease runs out: whichever job ran
    # first wrote the summary, and the other found nothing left to do.
    assert one(database, "SELECT state, attempts FROM jobs WHERE id = %s", (job_id,)) == (
        "done",
        2,
    )
    assert {state for (state,) in rows(database, "SELECT state FROM jobs")} == {"done"}
    assert one(database, "SELECT summary_revision FROM sessions WHERE id = 's1'") == (1,)
    assert one(database, "SELECT count(*) FROM session_summaries WHERE session_id = 's1'") == (1,)
    fragments = sorted((vault / "agent-memory").glob("*.md"))
    assert len(fragments) == 1
    assert fragments[0].read_text(encoding="utf-8").count("hash: bcrypt") == 1


@pytest.mark.slow
def test_worker_processes_beside_replicas_run_each_job_once_and_at_once(
    postgres_cluster, tmp_path, launch
):
    """A replica that leaves its jobs to `memvault worker` processes starts on PostgreSQL;
    workers started beside it (in its home, where SQLite refuses them) share the queue with
    a second replica's own worker, and every job runs once."""
    require_sdk("openai")
    database = postgres_cluster.database()
    sessions = [f"w{n}" for n in range(8)]
    with LLMServer() as llm:
        llm.delay = 0.2  # an LLM call takes time: the more workers, the more at once
        llm.respond = lambda r: json.dumps(
            SUMMARY if kind_of(r) == "summary" else {"fragments": []}
        )
        front = launch(
            replica(tmp_path / "front", database, llm_env(llm, MEMVAULT_WORKER_IN_SERVER="false"))
        )
        second = launch(replica(tmp_path / "second", database, llm_env(llm)))
        workers = [launch(worker_process(front.home, database, llm_env(llm))) for _ in range(2)]
        try:
            for n, session in enumerate(sessions):
                post_work((front, second)[n % 2].url, session)

            def all_extracted():
                """every session summarized and extracted"""
                (count,) = one(
                    database,
                    "SELECT count(*) FROM sessions WHERE extracted_seq IS NOT NULL "
                    "AND id = ANY(%s)",
                    (sessions,),
                )
                return count == len(sessions)

            wait_for(all_extracted, timeout=60)
            time.sleep(0.5)  # a job run twice would show its second call by now
            for process in workers:
                assert process.poll() is None, (front.home / "worker.log").read_text()
        finally:
            for process in workers:
                process.kill()
                process.wait(30)
            front.kill()
            second.kill()
        summary_calls = sum(1 for r in llm.requests if kind_of(r) == "summary")
        most_at_once = llm.most_at_once

    assert summary_calls == len(sessions)
    jobs = rows(database, "SELECT kind, state, attempts, claimed_by FROM jobs")
    assert {(kind, state, attempts) for kind, state, attempts, _ in jobs} <= {
        ("summarize", "done", 1),
        ("extract", "done", 1),
        ("graph", "done", 1),
    }
    summaries = rows(
        database, "SELECT id, summary_revision FROM sessions WHERE id = ANY(%s)", (sessions,)
    )
    assert sorted(summaries) == [(s, 1) for s in sorted(sessions)]
    assert most_at_once >= 2  # the workers ran jobs side by side
    # The worker processes took part, not only the second replica.
    pids = {int(c.split(":")[1]) for *_, c in jobs if c}
    assert pids & {p.pid for p in workers}


@pytest.mark.slow
def test_a_worker_process_hands_what_its_jobs_write_to_the_vaults_owner(
    postgres_cluster, tmp_path, launch
):
    """A `memvault worker` never writes a vault itself, its own folder or the shared one:
    the snapshot and board row a summary writes and the fragment an extraction writes are
    handed to the replica that owns the vault, which writes them there."""
    require_sdk("openai")
    database = postgres_cluster.database()
    vault = tmp_path / "vault"
    vault.mkdir()
    with LLMServer() as llm:
        llm.respond = lambda r: json.dumps(SUMMARY if kind_of(r) == "summary" else FRAGMENTS)
        owner = launch(
            replica(
                tmp_path / "owner",
                database,
                llm_env(llm, MEMVAULT_WORKER_IN_SERVER="false", MEMVAULT_VAULT=str(vault)),
            )
        )
        worker_home = tmp_path / "worker"
        worker = launch(worker_process(worker_home, database, llm_env(llm)))
        try:
            registered = httpx.post(
                f"{owner.url}/agentmemory/session/start",
                json={"sessionId": "s1", "project": "demo-app", "cwd": "/code/demo-app"},
                timeout=30,
            )
            assert registered.status_code < 300, registered.text
            post_work(owner.url, "s1")

            def extracted():
                """the worker summarized and extracted the session"""
                return one(database, "SELECT extracted_seq FROM sessions WHERE id = 's1'")[0]

            wait_for(extracted, timeout=60)
            assert worker.poll() is None, (worker_home / "worker.log").read_text()
        finally:
            worker.kill()
            worker.wait(30)
            owner.kill()
        jobs = rows(database, "SELECT kind, claimed_by FROM jobs WHERE kind <> 'graph'")
    assert {int(c.split(":")[1]) for _, c in jobs} == {worker.pid}
    handed = dict(rows(database, "SELECT kind, count(*) FROM vault_writes GROUP BY kind"))
    assert handed.get("update_derived", 0) >= 1 and handed.get("remember_derived") == 1
    (board_row,) = one(database, "SELECT board_session_id FROM sessions WHERE id = 's1'")
    snapshot = (vault / "memory" / "sessions" / f"{board_row}.md").read_text(encoding="utf-8")
    assert SUMMARY["current_context"] in snapshot
    fragments = sorted((vault / "agent-memory").glob("*.md"))
    assert len(fragments) == 1 and "bcrypt" in fragments[0].read_text(encoding="utf-8")
    assert list(worker_home.rglob("*.md")) == []  # its own folder holds no vault file
