"""Replayed history and recency: does the real-session search recall hold when the
history is ranked as a user living through it would have had it ranked?

``real_sessions.py`` replays weeks of history in minutes, and ranks it as of the day it
runs. This reads the homes a ``real_sessions.py --keep DIR`` run kept (each mode's folder
is copied to a temporary one; the kept one is never changed; the copy is brought up to
date by this tree's indexer first), and asks the labelled questions (not the controls) as
that run's ``/search`` asks them (limit 30, the question's project), three ways:

- *now*: ranked as of now, as the run ranked them;
- *as lived*: ranked as of the moment the asking session started;
- *as lived, no recency*: the same, with the recency weight at 0 (relevance 0.5,
  importance 0.3).

Until ``summary_document`` dated a summary by its session's last event, a replayed
session's summary was dated the day its board row was registered (the replay day), so
every summary ranked as fresh "now" (``docs/benchmarks.md``). Prints recall@5 and @10 of
the sessions that touched the request's files and of those holding a decision it
revisits, per mode, and how many summaries are dated the day of the run.

    .venv/bin/python bench/live_dates.py KEPT_DIR [--data DIR] [--modes default,lexical]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine
from real_sessions import DATA, KS, SEARCH_LIMIT, asked, recall, sessions_of

from memvault import Memory
from memvault.domain import utc_now
from memvault.search.documents import is_bookkeeping
from memvault.search.ranking import Weights

SETS = ("files", "decision")
WAYS = ("now", "as lived", "as lived, no recency")
NO_RECENCY = Weights(relevance=0.5, importance=0.3, recency=0.0)


def copied(kept: Path, into: Path) -> Path:
    home = into / kept.name
    shutil.copytree(kept, home, ignore=shutil.ignore_patterns("serving.lock"))
    return home


def ask_all(
    home: Path, mode: str, questions: list[dict], starts: dict, way: str
) -> tuple[dict, int]:
    embeddings = "none" if mode == "lexical" else "local"
    scores: dict[str, dict[int, list[float]]] = {s: {k: [] for k in KS} for s in SETS}
    with Memory.open(home=home, embeddings=embeddings, llm="none") as memory:
        if memory.index.semantic is not None:
            memory.index.semantic.warm(wait=True)
        memory.index.fresh()
        today = utc_now().date().isoformat()
        fresh = sum(
            d.updated_at.startswith(today)
            for d in memory.store.list_documents("summary", include_archived=True, limit=100_000)
        )
        for question in questions:
            lived = way != "now"
            hits = memory.index.searcher.search(
                asked(question),
                limit=SEARCH_LIMIT,
                project=question["project"],
                now=starts[question["session"]] if lived else None,
                weights=NO_RECENCY if way == "as lived, no recency" else None,
                admit=lambda document: not is_bookkeeping(document),  # as Recall.search
            )
            views = [{"eventIds": h.document.event_ids, "sessionId": h.document.session_id}
                     for h in hits]  # fmt: skip
            ranked = list(dict.fromkeys(s for view in views for s in sessions_of(view)))
            for k in KS:
                scores[question["set"]][k].append(recall(ranked, set(question["relevant"]), k))
    figures = {
        s: {k: sum(v) / len(v) for k, v in by_k.items()} | {"n": len(by_k[KS[0]])}
        for s, by_k in scores.items()
        if by_k[KS[0]]
    }
    return figures, fresh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kept", type=Path, help="the DIR a real_sessions.py --keep run kept")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--modes", default="default,lexical")
    args = parser.parse_args()
    if not (args.data / "queries.json").is_file():
        sys.exit(f"no real sessions at {args.data}: the benchmark reads ../shared/bench/")
    questions = json.loads((args.data / "queries.json").read_text(encoding="utf-8"))
    questions = [q for q in questions if q["set"] in SETS and q["relevant"]]
    starts = {}
    with (args.data / "sessions.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                session = json.loads(line)
                starts[session["id"]] = datetime.fromisoformat(session["started"])
    print(f"{len(questions)} questions · {machine()}")
    for mode in args.modes.split(","):
        kept = args.kept / mode
        if not (kept / "memvault.db").is_file():
            sys.exit(f"{kept}: no kept home (run real_sessions.py --keep {args.kept})")
        for way in WAYS:
            with tempfile.TemporaryDirectory() as into:
                figures, fresh = ask_all(copied(kept, Path(into)), mode, questions, starts, way)
            note = f" ({fresh} summaries dated today)"
            cells = "  ".join(
                f"{s} (n={f['n']}) R@5 {f[5]:.2f} R@10 {f[10]:.2f}" for s, f in figures.items()
            )
            print(f"{mode:8} {way:22} {cells}{note}")


if __name__ == "__main__":
    main()
