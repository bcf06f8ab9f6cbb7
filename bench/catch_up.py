"""A real history imported at once: how long until it is all searchable, and what a search
costs meanwhile.

The coding-sessions set's sessions (``../shared/bench/coding-sessions``, never committed),
every project, oldest first, go to a real ``memvault serve`` as the hooks would have sent
them (``/agentmemory/session/start``, then ``/observe/bulk``) until ``--events`` events are
sent (the last session cut there). From the first request the script reads health every
half second until the server is *caught up*: every event stored and in the lexical index,
every document that gets a vector embedded, no pipeline job or write pending. At each look
while documents wait for vectors it asks ``/search`` (limit 10) with the next labelled
request in its project, as a session starting during the import would, and times it; once
caught up, it asks each request twice more, for the same searches' cost without a backlog.

    .venv/bin/python bench/catch_up.py --events 10000            # default mode, ~10 min
    .venv/bin/python bench/catch_up.py --events 10000 --lexical

It prints the timeline as it goes (every ``--every`` seconds: documents waiting for vectors,
jobs pending), then the time to caught up and the searches' p50 / p95.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import real_sessions
from _server import machine, percentile, running_server


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


def run(data: Path, events: int, env: dict[str, str], every: float, cap: float) -> dict:
    sessions = history(data, events)
    questions = json.loads((data / "queries.json").read_text(encoding="utf-8"))
    timeline: list[tuple[float, int, int]] = []
    during: list[float] = []
    after: list[float] = []

    def look(at: float, report: dict) -> None:
        """A row of the timeline every ``every`` seconds, printed as it comes."""
        if timeline and at - timeline[-1][0] < every:
            return
        waiting = report["index"].get("documentsNotEmbedded") or 0
        timeline.append((at, waiting, report["queue"]["jobsPending"]))
        print(f"{at:>5.0f}  {waiting:>19,}  {timeline[-1][2]:>12,}", flush=True)

    with running_server(**env) as url:
        real_sessions.wait_embedder(url)
        began = time.perf_counter()
        sent = real_sessions.ingest(url, {"all": sessions})
        posted = time.perf_counter() - began
        print(f"{sent:,} events posted in {posted:.1f} s", flush=True)
        print("    s  waiting for vectors  jobs pending", flush=True)
        caught, _ = real_sessions.wait_for(
            url,
            began,
            cap,
            real_sessions.caught_up,
            real_sessions.prober(url, questions, during),
            look,
        )
        # The same searches once caught up, each request twice.
        once = real_sessions.prober(url, questions, after)
        for _ in range(2 * sum(q["set"] != "control" for q in questions)):
            once()
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
    caught = result["caught_up_s"]
    print(f"caught up: {f'not within {args.wait:.0f} s' if caught is None else f'{caught:.0f} s'}")
    if caught and most:
        print(f"documents waiting for vectors at most: {most:,} ({most / caught:.1f} a second)")
    for label, key in (
        ("while documents waited for vectors", "search_during_ms"),
        ("once caught up (each request twice)", "search_after_ms"),
    ):
        if times := result[key]:
            print(
                f"/search {label}: n={len(times)}"
                f" p50 {statistics.median(times):.0f} ms p95 {percentile(times, 95):.0f} ms"
            )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
