"""A search whose words a session's bookkeeping holds: is the work still found, and what
does it cost?

A host's notification in every session ("Claude needs your permission to use Bash") holds
the words of a request about Bash permissions. Bookkeeping is kept with no words in the
index (``documents.is_bookkeeping``), so it cannot crowd the work out of a search's
candidates, nor lend them to the tool call beside it. For stores of ``--sessions``
sessions, each with that notification (alone, or after a tool call), and one session of
15 real requests about the same thing, prints how many of 10 results are that session's
(when other sessions match too, four: its document and three of its events come before
theirs, search step 5), where the first is, and the median time of ``Memory.search``
(lexical, in process), against a query no notification holds.

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
SHAPES = ("alone", "beside")


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


def events(sessions: int, shape: str) -> list[dict]:
    """``alone``: each session a notice; ``beside``: a tool call, then the notice. The
    work: one session of 15 requests."""
    noise = []
    for n in range(sessions):
        if shape == "beside":
            ran = {"tool_name": "Bash", "tool_input": {"command": f"ls dir{n}"}}
            noise.append(envelope(f"s{n}", 0, "post_tool_use", ran))
        noise.append(envelope(f"s{n}", 1, "notification", NOTIFICATION))
    work = [
        envelope("work", n, "prompt_submit", {"prompt": f"ask before any Bash command that "
                 f"needs permission; rotate the refresh token, case {n}"})
        for n in range(15)
    ]  # fmt: skip
    return noise + work


def timed(memory: Memory, query: str, rounds: int) -> tuple[float, int, int | None]:
    """The median time of a search, how many of its results are the work's, and the place
    of the first (None: none)."""
    times, hits = [], []
    for _ in range(rounds):
        began = time.perf_counter()
        hits = memory.search(query, limit=10)
        times.append((time.perf_counter() - began) * 1000)
    places = [i for i, hit in enumerate(hits, 1) if hit.document.session_id == "work"]
    return statistics.median(times), len(places), places[0] if places else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="100,1000,5000")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    print(f"{machine()}; Memory.search, limit 10, lexical, median of {args.rounds}")
    print("results of the work's session among 10 (its first at), median time")
    for shape in SHAPES:
        for sessions in (int(n) for n in args.sessions.split(",")):
            with (
                tempfile.TemporaryDirectory() as home,
                Memory.open(home=Path(home), embeddings="none", llm="none") as memory,
            ):
                assert memory.observe_many(events(sessions, shape)).failed == 0
                memory.index.index_now(vectors=False)
                crowded = timed(memory, CROWDED, args.rounds)
                plain = timed(memory, PLAIN, args.rounds)
            print(
                f"{shape:6} {sessions:>6} notices: crowded {_cell(crowded)}; plain {_cell(plain)}"
            )


def _cell(timing: tuple[float, int, int | None]) -> str:
    ms, found, first = timing
    return f"{found}/10 (first at {first}), {ms:.1f} ms"


if __name__ == "__main__":
    main()
