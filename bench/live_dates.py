"""Replayed history and recency: how much of ``real_sessions.py``'s search recall comes
from session summaries being dated the day the history was replayed.

``real_sessions.py`` replays weeks of history in minutes. Events, observations and
fragments keep the dates the events carry, but a session's board row is registered when
the replay sends it, so its summary document is dated the replay day, and with recency in
the ranking every summary counts as fresh. This reads the homes a ``real_sessions.py
--keep DIR`` run kept (each mode's folder is copied to a temporary one; the kept one is
never changed), and asks the labelled questions (not the controls) as that run's
``/search`` asks them (limit 30, the question's project), three ways:

- *as replayed*: the store as the run left it, ranked as of now;
- *as lived*: every summary re-dated to its session's last event, and ranked as of the
  moment the asking session started, as a user working through those weeks would have
  asked;
- *as lived, no recency*: the same, with the recency weight at 0 (relevance 0.5,
  importance 0.3).

Prints recall@5 and @10 of the sessions that touched the request's files and of those
holding a decision it revisits, per mode.

    .venv/bin/python bench/live_dates.py KEPT_DIR [--data DIR] [--modes default,lexical]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine
from real_sessions import DATA, KS, SEARCH_LIMIT, asked, recall

from memvault import Memory
from memvault.search.ranking import Weights

SETS = ("files", "decision")
WAYS = ("as replayed", "as lived", "as lived, no recency")
NO_RECENCY = Weights(relevance=0.5, importance=0.3, recency=0.0)

# A summary's document is keyed by its board row; its session names that row.
REDATE_SUMMARIES = """
    UPDATE documents SET updated_at = (
        SELECT last_event_at FROM sessions s WHERE s.board_session_id = documents.key
    )
    WHERE kind = 'summary' AND EXISTS (
        SELECT 1 FROM sessions s
        WHERE s.board_session_id = documents.key AND s.last_event_at IS NOT NULL
    )
"""


def sessions_of(document) -> list[str]:
    """The host sessions a hit came from (as ``real_sessions.sessions_of`` reads a view)."""
    named = [str(e).split(":", 1)[0] for e in document.event_ids or []]
    if not named and document.session_id:
        named = [document.session_id]
    return list(dict.fromkeys(named))


def copied(kept: Path, into: Path, *, redate: bool) -> tuple[Path, int]:
    home = into / kept.name
    shutil.copytree(kept, home, ignore=shutil.ignore_patterns("serving.lock"))
    if not redate:
        return home, 0
    with sqlite3.connect(home / "memvault.db") as db:
        changed = db.execute(REDATE_SUMMARIES).rowcount
    return home, changed


def ask_all(home: Path, mode: str, questions: list[dict], starts: dict, way: str) -> dict:
    embeddings = "none" if mode == "lexical" else "local"
    scores: dict[str, dict[int, list[float]]] = {s: {k: [] for k in KS} for s in SETS}
    with Memory.open(home=home, embeddings=embeddings, llm="none") as memory:
        if memory.index.semantic is not None:
            memory.index.semantic.warm(wait=True)
        memory.index.fresh()
        for question in questions:
            lived = way != "as replayed"
            hits = memory.index.searcher.search(
                asked(question),
                limit=SEARCH_LIMIT,
                project=question["project"],
                now=starts[question["session"]] if lived else None,
                weights=NO_RECENCY if way == "as lived, no recency" else None,
            )
            ranked = list(dict.fromkeys(s for hit in hits for s in sessions_of(hit.document)))
            for k in KS:
                scores[question["set"]][k].append(recall(ranked, set(question["relevant"]), k))
    return {
        s: {k: sum(v) / len(v) for k, v in by_k.items()} | {"n": len(by_k[KS[0]])}
        for s, by_k in scores.items()
        if by_k[KS[0]]
    }


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
                home, redated = copied(kept, Path(into), redate=way != "as replayed")
                figures = ask_all(home, mode, questions, starts, way)
            note = f" ({redated} summaries re-dated)" if redated else ""
            cells = "  ".join(
                f"{s} (n={f['n']}) R@5 {f[5]:.2f} R@10 {f[10]:.2f}" for s, f in figures.items()
            )
            print(f"{mode:8} {way:22} {cells}{note}")


if __name__ == "__main__":
    main()
