"""Replicas benchmark: ingest and search on SQLite, on PostgreSQL with one `memvault serve`,
and on PostgreSQL with two replicas sharing the database.

    .venv/bin/python bench/replicas.py                  # everything (about ten minutes)
    .venv/bin/python bench/replicas.py --quick          # smaller counts, for a smoke run
    .venv/bin/python bench/replicas.py --skip-search    # no search figures

PostgreSQL is a throwaway cluster (tests/postgres_cluster.py: fsync off, on this machine's
cores, as bench/store.py). For each setup: closed-loop ingest throughput (32 connections
posting as fast as answers come back, spread over the replicas), then /observe latency
under an open-loop 200 events/s (latency from each request's due time, so queueing is not
hidden). Search: p50/p95 of lexical searches in process over 100,000 observations on each
engine. Jobs: how long the pipeline takes for a set of sessions with a slow scripted LLM,
run by a replica's own worker or by `memvault worker` processes. The machine is shared:
quote medians of several runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

from _server import Connection, envelope, machine, running_server
from ingest import steady

from tests.postgres_cluster import Cluster, binaries

os.environ.setdefault("MEMVAULT_EMBEDDINGS", "none")


async def saturate(urls: list[str], seconds: float, connections: int = 32) -> dict:
    """Closed loop: every connection posts as fast as answers come back; connection i
    posts to replica i mod len(urls)."""
    stop = time.perf_counter() + seconds
    counts = [0] * connections

    async def worker(i: int) -> None:
        conn = await Connection.open(urls[i % len(urls)])
        n = 0
        while time.perf_counter() < stop:
            body = json.dumps(envelope(f"sat-{i}", n)).encode()
            status, _ = await conn.post("/agentmemory/observe", body)
            assert status == 201, status
            n += 1
        counts[i] = n
        conn.close()

    began = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(connections)))
    elapsed = time.perf_counter() - began
    return {"events": sum(counts), "events_per_s": sum(counts) / elapsed}


def _children(parent: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == parent:
                    pids.append(int(entry.name))
    return pids


def _cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


class CPU:
    """CPU seconds the servers, the database and this driver spend while measuring: where
    the time goes when two cores are all there is."""

    def __init__(self, cluster: Cluster) -> None:
        self.postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])

    def sample(self) -> tuple[float, float, float, float]:
        servers = _cpu_seconds(_children(os.getpid()))
        database = _cpu_seconds([self.postmaster, *_children(self.postmaster)])
        driver = sum(os.times()[:2])
        return servers, database, driver, time.perf_counter()


def ingest(label: str, env_of: list[dict[str, str]], args, cpu: CPU) -> None:
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(running_server(**env)) for env in env_of]
        time.sleep(1.0)  # let start-up work (model-free here) settle
        before = cpu.sample()
        rates = [
            asyncio.run(saturate(urls, args.seconds))["events_per_s"] for _ in range(args.runs)
        ]
        after = cpu.sample()
        latency = [asyncio.run(steady(urls, 200, args.seconds)) for _ in range(args.runs)]
    servers, database, driver, wall = (b - a for a, b in zip(before, after, strict=True))
    p50 = statistics.median(r["p50_ms"] for r in latency)
    p99 = statistics.median(r["p99_ms"] for r in latency)
    failures = sum(r["failures"] for r in latency)
    print(
        f"{label:<28} ingest {statistics.median(rates):6.0f} events/s "
        f"(runs: {', '.join(f'{r:.0f}' for r in rates)})   "
        f"/observe at 200/s p50 {p50:5.1f} ms  p99 {p99:6.1f} ms"
        + (f"  ({failures} failed)" if failures else ""),
        flush=True,
    )
    print(
        f"{'':<28} CPU while saturated, in cores: servers {servers / wall:.2f}, "
        f"PostgreSQL {database / wall:.2f}, load driver {driver / wall:.2f} "
        f"(2 cores, shared with others' work)",
        flush=True,
    )


def search(label: str, store_url: str | None, home: Path, args) -> None:
    from memvault import Memory

    sys.path.insert(0, str(Path(__file__).parent))
    from search import measure, seed

    rng = random.Random(7)
    overrides = {"store_url": store_url} if store_url else {}
    with Memory.open(home=home, embeddings="none", **overrides) as memory:
        started = time.perf_counter()
        texts = seed(memory, rng, args.observations, 0)
        seeded = time.perf_counter() - started
        queries = [
            " ".join(rng.sample(text.split(), min(len(text.split()), rng.randint(3, 5))))
            for text in rng.sample(texts, args.queries)
        ]
        p50, p95 = measure(memory, queries)
        project50, project95 = measure(memory, queries, project="p3")
    print(
        f"{label:<28} search over {args.observations:,} observations: p50 {p50:6.1f} ms  "
        f"p95 {p95:6.1f} ms; in a project p50 {project50:6.1f} ms  p95 {project95:6.1f} ms "
        f"(seeded and indexed in {seeded:.0f} s)",
        flush=True,
    )


def jobs(label: str, database: str, *, in_server: bool, workers: int, args) -> None:
    """Time for the pipeline to summarize and extract ``args.sessions`` sessions with an
    LLM that takes 0.25 s a call (a scripted server on loopback): the jobs wait on the
    LLM, so what counts is how many run at once."""
    import subprocess
    import urllib.request

    import psycopg

    from tests.llm_server import LLMServer
    from tests.pipeline.test_llm_pipeline import SUMMARY, kind_of
    from tests.pipeline.test_service import work

    sessions = [f"job-{n}" for n in range(args.sessions)]
    with LLMServer() as llm, contextlib.ExitStack() as stack:
        llm.delay = 0.25
        llm.respond = lambda r: json.dumps(
            SUMMARY if kind_of(r) == "summary" else {"fragments": []}
        )
        env = {
            "MEMVAULT_STORE_URL": database,
            "MEMVAULT_LLM": "openai",
            "MEMVAULT_LLM_URL": llm.base_url,
            "MEMVAULT_LLM_MODEL": "bench-model",
            "MEMVAULT_LLM_API_KEY": "bench-key",
        }
        server_env = env if in_server else {**env, "MEMVAULT_WORKER_IN_SERVER": "false"}
        url = stack.enter_context(running_server(**server_env))
        home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memvault-bench-")))
        for _ in range(workers):
            process = subprocess.Popen(
                [sys.executable, "-m", "memvault.cli", "worker"],
                env={**os.environ, **env, "MEMVAULT_HOME": str(home)},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            stack.callback(process.wait, 30)
            stack.callback(process.kill)
        time.sleep(3.0)  # the worker processes start (imports, the store's pool)
        for session in sessions:
            body = json.dumps({"observations": work(session)}).encode()
            post = urllib.request.Request(
                f"{url}/agentmemory/observe/bulk", body, {"Content-Type": "application/json"}
            )
            urllib.request.urlopen(post, timeout=30).close()
        began = time.perf_counter()
        for session in sessions:
            post = urllib.request.Request(
                f"{url}/agentmemory/summarize",
                json.dumps({"sessionId": session}).encode(),
                {"Content-Type": "application/json"},
            )
            urllib.request.urlopen(post, timeout=30).close()
        with psycopg.connect(database, autocommit=True) as conn:
            while True:
                (done,) = conn.execute(
                    "SELECT count(*) FROM sessions WHERE extracted_seq IS NOT NULL"
                ).fetchone()
                if done == len(sessions) or time.perf_counter() - began > 300:
                    break
                time.sleep(0.05)
        elapsed = time.perf_counter() - began
        at_once = llm.most_at_once
    print(
        f"{label:<40} {2 * done} jobs (summary and extraction of {done} sessions) in "
        f"{elapsed:5.1f} s: {2 * done / elapsed:4.1f} jobs/s, at most {at_once} LLM calls at once",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("--skip-ingest", action="store_true")
    parser.add_argument("--skip-jobs", action="store_true")
    parser.add_argument("--sessions", type=int, default=24, help="Sessions the jobs figure runs.")
    parser.add_argument("--observations", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.quick:
        args.observations, args.queries, args.seconds, args.runs = 5_000, 50, 3.0, 1
        args.sessions = 6
    bindir = binaries()
    if bindir is None:
        sys.exit("PostgreSQL (initdb, pg_ctl) is not installed")
    print(f"replicas — {machine()}, load average {os.getloadavg()[0]:.1f} at start", flush=True)
    cluster = Cluster(bindir).start()
    try:
        cpu = CPU(cluster)
        if not args.skip_ingest:
            ingest("SQLite, 1 server", [{}], args, cpu)
            one = cluster.database()
            ingest("PostgreSQL, 1 replica", [{"MEMVAULT_STORE_URL": one}], args, cpu)
            two = cluster.database()
            ingest("PostgreSQL, 2 replicas", [{"MEMVAULT_STORE_URL": two}] * 2, args, cpu)
        if not args.skip_jobs:
            for label, in_server, workers in (
                ("jobs: 1 replica, its own worker", True, 0),
                ("jobs: 1 replica + 2 worker processes", False, 2),
                ("jobs: 1 replica + 4 worker processes", False, 4),
            ):
                jobs(label, cluster.database(), in_server=in_server, workers=workers, args=args)
        if not args.skip_search:
            with tempfile.TemporaryDirectory(prefix="memvault-bench-") as scratch:
                search("SQLite", None, Path(scratch) / "sqlite", args)
                search("PostgreSQL", cluster.database(), Path(scratch) / "postgres", args)
    finally:
        cluster.stop()
    print(f"load average {os.getloadavg()[0]:.1f} at the end", flush=True)


if __name__ == "__main__":
    main()
