"""The pipeline's work on a real history, in process: each step timed on its own.

The real-session benchmark's history (``real_sessions.load``: the coding-sessions set's
earlier sessions of every project, read from ``../shared/bench/coding-sessions``, never
committed) goes into a fresh lexical memory through ``Memory.observe_many``. Then every
session is summarized, then every session's fragments are extracted, then the index takes
in what is left, each step timed. No server, no embedder: the figures are the pipeline's
own work, which a catch-up pays before its vectors.

    .venv/bin/python bench/pipeline_history.py --runs 2

It prints, for each run, the sessions and events, and the seconds each step took.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import real_sessions
from _server import machine

from memvault import Memory


def run(history: list[dict]) -> dict[str, float]:
    timings: dict[str, float] = {}
    with (
        tempfile.TemporaryDirectory() as home,
        Memory.open(home=Path(home), embeddings="none", llm="none") as memory,
    ):
        steps = {
            "observe": lambda s: memory.observe_many(s["events"]),
            "summarize": lambda s: memory.pipeline.summarize_session(s["id"]),
            "extract": lambda s: memory.pipeline.extract_session(s["id"]),
        }
        for step, work in steps.items():
            began = time.perf_counter()
            for session in history:
                work(session)
            timings[step] = time.perf_counter() - began
        began = time.perf_counter()
        memory.index.index_now()
        timings["index"] = time.perf_counter() - began
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=real_sessions.DATA)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    by_project, _ = real_sessions.load(args.data, None)
    history = [session for sessions in by_project.values() for session in sessions]
    events = sum(len(session["events"]) for session in history)
    print(f"pipeline on a real history: {len(history)} sessions, {events:,} events — {machine()}")
    for _ in range(args.runs):
        timings = run(history)
        print("  ".join(f"{step} {seconds:.1f} s" for step, seconds in timings.items()))


if __name__ == "__main__":
    main()
