"""Fragment extraction and session summaries on real coding sessions: how long the
offline pipeline's two readings of a session take.

Every session of the real-session set (``../shared/bench/coding-sessions/``: its history
and the sessions its questions open) is ingested once into a throwaway SQLite store, then
``derive.fragments.extract_fragments`` and ``derive.summarize.summarize`` each read every
session's events and observations whole, ``--rounds`` times; prints the drafts made, how
many cite files, the summaries with edited files and with real work, and the seconds per
round of each (median).

    .venv/bin/python bench/extract.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine
from real_sessions import DATA

from memvault import Memory
from memvault.derive.fragments import extract_fragments
from memvault.derive.summarize import has_real_work, summarize


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sessions_file = args.data / "sessions.jsonl"
    if not sessions_file.is_file():
        sys.exit(f"no real sessions at {sessions_file}: the benchmark reads ../shared/bench/")
    with sessions_file.open(encoding="utf-8") as lines:
        sessions = [json.loads(line) for line in lines if line.strip()]
    with (
        tempfile.TemporaryDirectory() as home,
        Memory.open(home=Path(home), embeddings="none", llm="none") as memory,
    ):
        for session in sessions:
            memory.observe_many(session["events"])
        read = [
            (memory.reads.events(s["id"]), memory.reads.observations(s["id"]), s["project"])
            for s in sessions
        ]
    seconds, drafts = [], []
    for _ in range(args.rounds):
        began = time.perf_counter()
        drafts = [d for events, seen, project in read for d in extract_fragments(
            events, seen, project=project
        )]  # fmt: skip
        seconds.append(time.perf_counter() - began)
    summarized, summaries = [], []
    for _ in range(args.rounds):
        began = time.perf_counter()
        summaries = [summarize(events, seen) for events, seen, _ in read]
        summarized.append(time.perf_counter() - began)
    citing = sum(any(f.startswith("files:") for f in d.facts) for d in drafts)
    edited = sum(bool(s.edited_files) for s in summaries)
    working = sum(has_real_work(s) for s in summaries)
    print(f"fragment extraction and summaries: {len(read)} real sessions — {machine()}")
    print(f"fragments: {len(drafts)} drafts ({citing} cite files); {_rounds(seconds)}")
    print(
        f"summaries: {len(summaries)} ({edited} with edited files, {working} with real work); "
        f"{_rounds(summarized)}"
    )


def _rounds(seconds: list[float]) -> str:
    each = ", ".join(f"{s:.2f}" for s in seconds)
    return f"seconds per round {each}; median {statistics.median(seconds):.2f}"


if __name__ == "__main__":
    main()
