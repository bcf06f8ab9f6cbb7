"""Search while a backlog is embedded: a kept default home asked with part of its vectors gone.

The embedder works through a backlog in the order documents changed, oldest first, so half
way through an import the newer half of the documents has no vector yet: search finds them
by their words, and vectors weigh only the rest. This script copies a home that a full
run kept (every document embedded), takes away the vectors of a share of its documents,
and asks the benchmark's questions of a real server on the copy, with nothing left to
embed: search sees the store as it was at that point of the catch-up. States are
``none`` (every vector there), and ``ORDER:SHARE`` with ORDER ``newest`` (the point of a
catch-up: the most recently changed documents without vectors), ``oldest`` or ``random``
(seeded), and SHARE the part of the vectors taken away.

    .venv/bin/python bench/real_sessions.py --keep DIR            # the real sessions' homes
    .venv/bin/python bench/backlog.py real DIR
    .venv/bin/python bench/conversations.py --default-only --keep DIR2   # LoCoMo's
    .venv/bin/python bench/backlog.py locomo DIR2

Prints per state: for ``real``, the ``files`` questions' recall@10, the share of their
prompt blocks' lines from a relevant session, and the controls that get nothing; for
``locomo``, recall_any@5 and @10 of the evidence sessions.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import conversations
import real_sessions
from _server import machine

DEFAULT_STATES = "none,newest:0.25,newest:0.5,newest:0.9,oldest:0.5,random:0.5"
ORDERS = ("newest", "oldest", "random")
WAIT = 300.0  # seconds a copy may take to report itself caught up (nothing is left to do)


def parse_states(text: str) -> list[tuple[str, float]]:
    """``none,newest:0.5,…`` as (order, share) pairs; ``ValueError`` naming a bad one."""
    states = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        if item == "none":
            states.append(("none", 0.0))
            continue
        order, _, share = item.partition(":")
        try:
            value = float(share)
        except ValueError:
            value = -1.0
        if order not in ORDERS or not 0 < value <= 1:
            raise ValueError(
                f"state {item!r}: write none, or ORDER:SHARE with ORDER one of"
                f" {', '.join(ORDERS)} and SHARE above 0, at most 1"
            )
        states.append((order, value))
    if not states:
        raise ValueError("no state given")
    return states


def without_vectors(db: Path, order: str, share: float) -> int:
    """Take the vectors of ``share`` of the documents that have one away, chosen by
    ``order`` (by when each document last changed: the embedder's order); how many."""
    with sqlite3.connect(db) as conn:
        ids = [
            row[0]
            for row in conn.execute(
                "SELECT v.document_id FROM document_vectors v "
                "JOIN documents d ON d.id = v.document_id ORDER BY d.revision"
            )
        ]
        count = round(len(ids) * share)
        if order == "newest":
            gone = ids[len(ids) - count :]
        elif order == "oldest":
            gone = ids[:count]
        elif order == "random":
            gone = random.Random(5).sample(ids, count)
        else:
            gone = []
        conn.executemany("DELETE FROM document_vectors WHERE document_id = ?", [(i,) for i in gone])
    return len(gone)


def ask_real(kept: Path, prepare: Callable[[Path], None]) -> str:
    _, questions = real_sessions.load(real_sessions.DATA, None)
    run = real_sessions.run_mode("default", {}, questions, WAIT, kept=kept, prepare=prepare)
    scored = [real_sessions.score(q, r) for q, r in zip(questions, run["rows"], strict=True)]
    table = real_sessions.summarize(questions, {"default": scored}, {"default": run})["groups"]
    files, silent = table["files"]["default"], table["control"]["default"]["silent"]
    precision = files["prompt_precision"]
    return (
        f"files recall@10 {files['R@10']:.2f}, prompt lines from a relevant session"
        f" {'-' if precision is None else f'{precision:.2f}'} ({files['prompt_lines']}),"
        f" controls silent {silent:.2f}"
    )


def ask_locomo(kept: Path, prepare: Callable[[Path], None]) -> str:
    _, questions = conversations.locomo(conversations.LOCOMO)
    run = conversations.run_mode("default", {}, questions, WAIT, kept=kept, prepare=prepare)
    found = [
        conversations.recalls(ranked, q["relevant"])
        for q, ranked in zip(questions, run["ranked"], strict=True)
    ]
    at5, at10 = (statistics.fmean(f[f"any@{k}"] for f in found) for k in (5, 10))
    return f"recall_any@5 {at5:.3f}, @10 {at10:.3f} (n={len(questions)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", choices=("real", "locomo"))
    parser.add_argument("kept", type=Path, help="the --keep folder of a full run")
    parser.add_argument("--states", default=DEFAULT_STATES, help=f"default: {DEFAULT_STATES}")
    args = parser.parse_args()
    home = args.kept / "default"
    if not (home / "memvault.db").is_file():
        parser.error(f"{args.kept}: no default/memvault.db (a --keep run leaves it)")
    try:
        states = parse_states(args.states)
    except ValueError as exc:
        parser.error(f"--states: {exc}")
    data = real_sessions.DATA if args.data == "real" else conversations.LOCOMO
    if not data.exists():
        parser.error(f"{data} is not here: the data sets are read where they lie")
    asker = ask_real if args.data == "real" else ask_locomo
    print(f"{args.data}, default mode, vectors taken away — {machine()}", flush=True)
    for order, share in states:
        gone: list[int] = []

        def prepare(home: Path, order=order, share=share, gone=gone) -> None:
            gone.append(without_vectors(home / "memvault.db", order, share))

        figures = asker(args.kept, prepare)
        state = "none" if order == "none" else f"{order}:{share:g}"
        print(f"{state:12} ({gone[0]:,} vectors away): {figures}", flush=True)


if __name__ == "__main__":
    main()
