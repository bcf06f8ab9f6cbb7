"""A search whose words a session's bookkeeping holds: is the work still found, and what
does it cost?

A host's notification in every session ("Claude needs your permission to use Bash") holds
the words of a request about Bash permissions. Bookkeeping is kept with no words in the
index (``documents.is_bookkeeping``), so it cannot crowd the work out of a search's
candidates. For stores of ``--sessions`` sessions, each with that notification, and 15
real requests about the same thing, prints how many of 10 results are those requests and
the median time of ``Memory.search`` (lexical, in process), against a query no
notification holds.

    .venv/bin/python bench/crowded.py [--sessions 100,1000,5000] [--rounds 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine

from memvault import Memory

CROWDED = "permission to use Bash"
NOTIFICATION = {"message": "Claude needs your permission to use Bash"}
PLAIN = "rotate the refresh token"


def envelope(session: str, n: int, hook: str, data: dict) -> dict:
    return {
        "hookType": hook,
        "sessionId": session,
        "eventId": f"{session}:{n}",
        "project": "demo-app",
        "cwd": "/src/demo-app",
        "timestamp": f"2026-11-{1 + n % 28:02d}T10:00:00.000Z",
        "data": data,
    }


def events(sessions: int) -> list[dict]:
    noise = [envelope(f"s{n}", 0, "notification", NOTIFICATION) for n in range(sessions)]
    work = [
        envelope("work", n, "prompt_submit", {"prompt": f"ask before any Bash command that "
                 f"needs permission; rotate the refresh token, case {n}"})
        for n in range(15)
    ]  # fmt: skip
    return noise + work


def timed(memory: Memory, query: str, rounds: int) -> tuple[float, int]:
    """The median time of a search, and how many of its results are the work's."""
    times, found = [], 0
    for _ in range(rounds):
        began = time.perf_counter()
        hits = memory.search(query, limit=10)
        times.append((time.perf_counter() - began) * 1000)
        found = sum(hit.document.session_id == "work" for hit in hits)
    return statistics.median(times), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="100,1000,5000")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    print(f"{machine()}; Memory.search, limit 10, lexical, median of {args.rounds}")
    for sessions in (int(n) for n in args.sessions.split(",")):
        with (
            tempfile.TemporaryDirectory() as home,
            Memory.open(home=Path(home), embeddings="none", llm="none") as memory,
        ):
            assert memory.observe_many(events(sessions)).failed == 0
            memory.index.index_now(vectors=False)
            crowded_ms, crowded = timed(memory, CROWDED, args.rounds)
            plain_ms, plain = timed(memory, PLAIN, args.rounds)
        print(
            f"{sessions:>6} notifications: crowded query {crowded}/10 of the work in "
            f"{crowded_ms:.1f} ms; plain query {plain}/10 of the work in {plain_ms:.1f} ms; "
            f"ratio {crowded_ms / plain_ms:.2f}"
        )


if __name__ == "__main__":
    main()
