"""Pipeline benchmark: offline throughput, and ingest latency while the pipeline is busy.

1. In process: 200 sessions of 50 events each (prompts, edits, commands, failures,
   answers); every session is summarized and searched for fragments, timed as
   observations processed per second.
2. A real server (as `make run` starts it: with the local embedding model, given 15 s to
   load): a backlog of sessions is posted with a low summary threshold, so its worker
   summarizes, extracts and embeds flat out, while `/observe` is driven at 200 events/s;
   its p50/p99 are compared with the same load on an idle server.

    .venv/bin/python bench/pipeline.py
    .venv/bin/python bench/pipeline.py --offline-only   # part 1 alone
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine, running_server
from ingest import steady

from memvault import Memory

SESSIONS = 200
WARM_UP_SECONDS = 15
EVENTS = 50


def session_events(session: str, events: int) -> list[dict]:
    steps = []
    for n in range(events):
        kind = n % 5
        if kind == 0:
            hook, data = "prompt_submit", {"prompt": f"Make the importer skip empty rows ({n})"}
        elif kind == 1:
            hook, data = (
                "post_tool_use",
                {
                    "tool_name": "Edit",
                    "tool_input": {"file_path": f"/code/app/src/importer_{n % 7}.py"},
                    "tool_output": "ok",
                },
            )
        elif kind == 2:
            hook, data = (
                "post_tool_failure",
                {
                    "tool_name": "Bash",
                    "tool_input": {"command": "pytest tests/test_importer.py"},
                    "error": "AssertionError: expected 3 rows, got 4",
                },
            )
        elif kind == 3:
            hook, data = (
                "post_tool_use",
                {
                    "tool_name": "Bash",
                    "tool_input": {"command": "pytest tests/test_importer.py"},
                    "tool_output": "5 passed",
                },
            )
        else:
            hook, data = (
                "assistant_response",
                {"assistantResponse": "Fixed. We decided to strip whitespace before the check."},
            )
        steps.append(
            {
                "hookType": hook,
                "sessionId": session,
                "project": "bench",
                "cwd": "/code/app",
                "timestamp": f"2026-11-30T10:{n // 60:02d}:{n % 60:02d}.000Z",
                "eventId": f"{session}-{n}",
                "data": data,
            }
        )
    return steps


def throughput() -> dict:
    with tempfile.TemporaryDirectory() as home, Memory.open(home=Path(home)) as memory:
        for s in range(SESSIONS):
            memory.observe_many(session_events(f"s{s}", EVENTS))
        started = time.perf_counter()
        for s in range(SESSIONS):
            memory.pipeline.summarize_session(f"s{s}")
        summarized = time.perf_counter() - started
        started = time.perf_counter()
        for s in range(SESSIONS):
            memory.pipeline.extract_session(f"s{s}")
        extracted = time.perf_counter() - started
        started = time.perf_counter()
        for s in range(SESSIONS):
            memory.pipeline.graph_session(f"s{s}")
        graphed = time.perf_counter() - started
        stats = memory.store.graph_stats()
    observations = SESSIONS * EVENTS
    return {
        "observations": observations,
        "summarized_per_s": observations / summarized,
        "extracted_per_s": observations / extracted,
        "graphed_per_s": observations / graphed,
        "graph": (stats.total_nodes, stats.total_edges),
    }


def post(url: str, path: str, body: dict) -> None:
    request = urllib.request.Request(
        f"{url}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    urllib.request.urlopen(request, timeout=30).close()


def latency(busy: bool) -> dict:
    env = {"MEMVAULT_SUMMARY_THRESHOLD_OBSERVATIONS": "5"} if busy else {}
    with running_server(**env) as url:
        time.sleep(WARM_UP_SECONDS)  # the embedding model loads at start
        if busy:
            for s in range(SESSIONS):
                events = session_events(f"b{s}", EVENTS)
                post(url, "/agentmemory/observe/bulk", {"observations": events})
        return asyncio.run(steady(url, 200, 20))


def main() -> None:
    print(f"pipeline — {machine()}")
    figures = throughput()
    summarized, extracted = figures["summarized_per_s"], figures["extracted_per_s"]
    print(
        f"offline: {figures['observations']:,} observations; summarized {summarized:,.0f}/s, "
        f"fragments extracted {extracted:,.0f}/s, graph extracted "
        f"{figures['graphed_per_s']:,.0f}/s ({figures['graph'][0]:,} nodes, "
        f"{figures['graph'][1]:,} edges)"
    )
    if "--offline-only" in sys.argv:
        return
    for busy in (False, True):
        result = latency(busy)
        label = "worker busy" if busy else "worker idle"
        print(
            f"/observe at 200/s, {label}: p50 {result['p50_ms']:.1f} ms, "
            f"p99 {result['p99_ms']:.1f} ms, failures {result['failures']}"
        )


if __name__ == "__main__":
    main()
