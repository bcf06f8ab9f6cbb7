"""The search a context request makes, timed on the real coding sessions' history.

Every history session of ``../shared/bench/coding-sessions`` goes into one store (SQLite by
default; with ``--postgres``, a throwaway PostgreSQL cluster started for the run) through
the offline pipeline, lexical, indexed; then each of the 88 requests is searched as a
prompt block searches it (``Searcher.find`` with the block's quotas), ``--rounds`` times.
Prints the median, p95 and max over the requests of each request's median time (with the
counts of its words kept from the round before, and with nothing counted yet), and the
same for weighing each request's words for the relevance floor with nothing counted yet,
for finding the project's decisions the request names (read again, and kept from the
request before), and for the whole prompt block (``Context.context``):

    .venv/bin/python bench/context_search.py [--rounds 3] [--postgres]

The store is built once per run; to compare two commits, run each (the build is the same
for both, and the first ten requests warm the caches before timing).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

import floors
import real_sessions
from _server import machine

from memvault import Memory
from memvault.memory.context import CONTEXT_QUOTAS
from memvault.search.query import parse


def timed(
    requests: list[tuple[str, str]],
    rounds: int,
    call: Callable[[str, str], object],
    *,
    before: Callable[[], object] = lambda: None,
) -> list[float]:
    """Each request's median time over ``rounds`` of ``call(project, text)``, in
    milliseconds; ``before`` runs ahead of each call, untimed (a cache cleared: a new
    request's words are new to the counts)."""
    spent: list[list[float]] = [[] for _ in requests]
    for _ in range(rounds):
        for i, (project, text) in enumerate(requests):
            before()
            began = time.perf_counter()
            call(project, text)
            spent[i].append((time.perf_counter() - began) * 1000)
    return [statistics.median(times) for times in spent]


def measured(memory: Memory, requests: list[tuple[str, str]], rounds: int) -> dict[str, list]:
    """What a context request spends where: the search (its words counted already, and
    with nothing counted yet), the floor's weighing of the request's words with nothing
    counted yet, finding the project's decisions it names (read again, and kept), and the
    whole block."""
    searcher, context = memory.index.searcher, memory.context
    parsed = {text: parse(text) for _, text in requests}

    def find(project: str, text: str) -> None:
        searcher.find(text, CONTEXT_QUOTAS, project=project)

    def decisions(project: str, text: str) -> None:
        context._decisions(text, project, None, set())

    def block(project: str, text: str) -> None:
        context.context(project=project, query=text)

    for project, text in requests[:10]:  # warm the caches
        find(project, text)
    return {
        "find": timed(requests, rounds, find),
        "find, nothing counted yet": timed(requests, rounds, find, before=searcher.counts.clear),
        "the floor's weighing, nothing counted yet": timed(
            requests,
            rounds,
            lambda _, text: context._reading(parsed[text]),
            before=searcher.counts.clear,
        ),
        "the decisions the request names, read again": timed(
            requests, rounds, decisions, before=context._decisions_kept.clear
        ),
        "the decisions the request names, kept": timed(requests, rounds, decisions),
        "the whole prompt block (search, floor, focus, packing)": timed(requests, rounds, block),
    }


def spread(name: str, times: list[float]) -> str:
    return (
        f"{name}: p50 {statistics.median(times):.1f} ms,"
        f" p95 {statistics.quantiles(times, n=20)[18]:.1f} ms, max {max(times):.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=real_sessions.DATA)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL cluster")
    args = parser.parse_args()
    if not args.data.exists():
        sys.exit(f"{args.data} is not here: this benchmark reads ../shared/bench/")
    history, questions = real_sessions.load(args.data, None)
    ordered = sorted(
        (s for group in history.values() for s in group), key=lambda s: (s["started"], s["id"])
    )
    requests = [(q["project"], real_sessions.asked(q)) for q in questions]
    cluster = None
    store = {}
    if args.postgres:
        from tests.postgres_cluster import Cluster, binaries

        bindir = binaries()
        if bindir is None:
            sys.exit("PostgreSQL (initdb, pg_ctl) is not installed")
        cluster = Cluster(bindir).start()  # fsync off: a throwaway cluster
        store = {"store_location": cluster.database()}
    try:
        with Memory.open(
            home=Path(tempfile.mkdtemp()), embeddings="none", llm="none", **store
        ) as memory:
            began = time.perf_counter()
            floors.ingest(memory, [s["events"] for s in ordered], pipeline=True)
            built = time.perf_counter() - began
            figures = measured(memory, requests, args.rounds)
    finally:
        if cluster is not None:
            cluster.stop()
    engine = "PostgreSQL" if args.postgres else "SQLite"
    print(f"context search on the real sessions ({engine}) — {machine()}")
    print(f"store built in {built:.0f} s; {len(requests)} requests, {args.rounds} rounds")
    for name, times in figures.items():
        print(spread(name, times))


if __name__ == "__main__":
    main()
