"""A real history imported at once: how long until it is all searchable, and what a search
costs meanwhile.

The coding-sessions set's sessions (``../shared/bench/coding-sessions``, never committed),
every project, oldest first, go to a real ``memvault serve`` as the hooks would have sent
them (``/agentmemory/session/start``, then ``/observe/bulk``) until ``--events`` events are
sent (the last session cut there). From the first request the script reads health every
second until the server is *caught up*: every event stored and in the lexical index, every
document that gets a vector embedded, no pipeline job or write pending. Meanwhile, while
documents wait for vectors, it asks ``/search`` (limit 10) with the set's requests in turn,
as a session starting during the import would, and times each; once caught up, it asks
each request twice more, for the same searches' cost without a backlog.

    .venv/bin/python bench/catch_up.py --events 10000            # default mode, ~10 min
    .venv/bin/python bench/catch_up.py --events 10000 --lexical

It prints the timeline (every ``--every`` seconds: documents waiting for vectors, jobs
pending), documents embedded a second, time to caught up, and the searches' p50 / p95.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import real_sessions
from _server import health, machine, percentile, running_server


def history(data: Path, events: int) -> list[dict]:
    """The set's sessions, oldest first, cut so that ``events`` events are sent."""
    sessions = []
    with (data / "sessions.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            sessions.append(json.loads(line))
    sessions.sort(key=lambda s: (s["started"], s["id"]))
    taken, left = [], events
    for session in sessions:
        if left <= 0:
            break
        taken.append({**session, "events": session["events"][:left]})
        left -= len(taken[-1]["events"])
    if left > 0:
        raise SystemExit(f"the set holds {events - left:,} events, fewer than {events:,}")
    return taken


def searching(
    url: str, requests: list[tuple[str, str]], stop: threading.Event, out: list[float]
) -> None:
    """``/search`` with the next request in its project, one after another, while ``stop``
    is not set."""
    n = 0
    while not stop.is_set():
        query, project = requests[n % len(requests)]
        body = {"query": query, "project": project, "limit": 10}
        began = time.perf_counter()
        real_sessions.call(url, "/agentmemory/search", body)
        out.append((time.perf_counter() - began) * 1000)
        n += 1
        stop.wait(0.5)


def run(data: Path, events: int, env: dict[str, str], every: float, cap: float) -> dict:
    sessions = history(data, events)
    questions = json.loads((data / "queries.json").read_text(encoding="utf-8"))
    requests = [(real_sessions.asked(q), q["project"]) for q in questions if q["set"] != "control"]
    timeline: list[tuple[float, int, int]] = []
    during: list[float] = []
    with running_server(**env) as url:
        real_sessions.wait_embedder(url)
        began = time.perf_counter()
        sent = real_sessions.ingest(url, {"all": sessions})
        posted = time.perf_counter() - began
        stop = threading.Event()
        prober: threading.Thread | None = None
        streak, last_row, caught = 0, -every, None
        while True:
            report = health(url)
            now = time.perf_counter() - began
            waiting = report["index"].get("documentsNotEmbedded") or 0
            if waiting and prober is None:
                prober = threading.Thread(target=searching, args=(url, requests, stop, during))
                prober.start()
            if not waiting:
                stop.set()
            if now - last_row >= every:
                timeline.append((now, waiting, report["queue"]["jobsPending"]))
                last_row = now
            streak = streak + 1 if real_sessions.caught_up(report) else 0
            if streak == 2:
                caught = now
                break
            if now > cap:
                break
            time.sleep(1)
        stop.set()
        if prober is not None:
            prober.join()
        after: list[float] = []  # the same searches once caught up, twice over
        for query, project in requests * 2:
            began_one = time.perf_counter()
            real_sessions.call(
                url, "/agentmemory/search", {"query": query, "project": project, "limit": 10}
            )
            after.append((time.perf_counter() - began_one) * 1000)
    return {
        "events": sent,
        "posted_s": posted,
        "caught_up_s": caught,
        "timeline": timeline,
        "search_during_ms": during,
        "search_after_ms": after,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=real_sessions.DATA)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--lexical", action="store_true", help="no vectors")
    parser.add_argument("--every", type=float, default=30, help="seconds between timeline rows")
    parser.add_argument("--wait", type=float, default=3600, help="give up after this long")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    mode = "lexical" if args.lexical else "default"
    today = f"{datetime.now(UTC):%Y-%m-%d}"
    print(f"catch-up of {args.events:,} real events, {mode} — {machine()}, {today}", flush=True)
    result = run(args.data, args.events, real_sessions.MODES[mode], args.every, args.wait)
    most = max((w for _, w, _ in result["timeline"]), default=0)
    print(f"{result['events']:,} events posted in {result['posted_s']:.1f} s")
    print("   s  waiting for vectors  jobs pending")
    for at, waiting, jobs in result["timeline"]:
        print(f"{at:>5.0f}  {waiting:>19,}  {jobs:>12,}")
    caught = result["caught_up_s"]
    print(f"caught up: {f'not within {args.wait:.0f} s' if caught is None else f'{caught:.0f} s'}")
    if caught and most:
        print(f"documents waiting for vectors at most: {most:,} ({most / caught:.1f} a second)")
    during = result["search_during_ms"]
    if during:
        print(
            f"/search while documents waited for vectors: n={len(during)}"
            f" p50 {statistics.median(during):.0f} ms p95 {percentile(during, 95):.0f} ms"
        )
    after = result["search_after_ms"]
    print(
        f"/search once caught up (each request twice): n={len(after)}"
        f" p50 {statistics.median(after):.0f} ms p95 {percentile(after, 95):.0f} ms"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
