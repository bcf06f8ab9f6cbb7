"""What weighing a request without its own session's prompts costs a prompt block.

A prompt block weighs the request's words as if the asking session's requests were not in
the index (``memory/context.py``, ``_own_terms``): it reads the session's newest
documents and the words of its prompts. This script makes one session of ``--turns``
turns, each a prompt and a reply of ``--chars`` characters of real coding-session text
(``../shared/bench/coding-sessions``, never committed; random words of its own without
it), beside a few other sessions, and times ``Memory.context`` for a request: asked by no
session (nothing to take out), by the long session for the first time (its prompts
analyzed), and by it again (their words kept). Medians of ``--repeat`` calls.

    .venv/bin/python bench/own_words.py [--turns 20] [--chars 8000] [--repeat 15]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine
from real_sessions import DATA

from memvault import Memory
from memvault.search import context as packing

REQUEST = "the database pool leaks connections under load: release the client in finally"


def words(data: Path) -> list[str]:
    source = data / "sessions.jsonl"
    if source.exists():
        with source.open(encoding="utf-8") as text:
            return text.read(2_000_000).split()
    return [f"word{n}" for n in range(5000)]


def event(session: str, n: int, hook: str, text: str) -> dict:
    field = "prompt" if hook == "prompt_submit" else "assistantResponse"
    return {
        "hookType": hook,
        "sessionId": session,
        "eventId": f"{session}:{n}",
        "project": "bench",
        "cwd": "/src/bench",
        "timestamp": f"2026-11-20T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        "data": {field: text},
    }


def timed(call, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        call()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--chars", type=int, default=8000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    rng = random.Random(7)
    vocabulary = words(args.data)

    def text() -> str:
        return " ".join(rng.choice(vocabulary) for _ in range(args.chars // 4))[: args.chars]

    print(f"{args.turns} turns of {args.chars:,} characters — {machine()}")
    with Memory.open(home=Path(tempfile.mkdtemp()), embeddings="none", llm="none") as memory:
        events = [event(f"other-{n}", n, "prompt_submit", text()) for n in range(20)]
        for turn in range(args.turns):
            events.append(event("long", 2 * turn, "prompt_submit", text()))
            events.append(event("long", 2 * turn + 1, "assistant_response", text()))
        memory.capture.observe_many(events)
        memory.index.index_now()

        def ask(session: str | None) -> None:
            memory.context.context(project="bench", query=REQUEST, session_id=session)

        alone = timed(lambda: ask(None), args.repeat)

        def first() -> None:
            packing._words.cache_clear()  # the session's prompts not analyzed yet
            ask("long")

        fresh = timed(first, args.repeat)
        again = timed(lambda: ask("long"), args.repeat)
    print(f"/context, no asking session:            {alone:.1f} ms")
    print(f"/context, the long session, first time: {fresh:.1f} ms")
    print(f"/context, the long session, again:      {again:.1f} ms")


if __name__ == "__main__":
    main()
