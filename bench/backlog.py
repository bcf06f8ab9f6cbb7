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
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).parent))

import conversations
import real_sessions
from _server import machine, running_server

DEFAULT_STATES = "none,newest:0.25,newest:0.5,newest:0.9,oldest:0.5,random:0.5"
ORDERS = ("newest", "oldest", "random")


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


def ask_real(url: str, questions: list[dict]) -> str:
    rows = [real_sessions.ask(url, q, n, again=True) for n, q in enumerate(questions)]
    report = real_sessions.call(url, "/agentmemory/health")
    folder = PurePosixPath(report["vault"]["fragmentsFolder"]).name
    sources = real_sessions.trace(url, {i for r in rows for i in r["prompt_items"]}, folder)
    recall, lines, relevant, silent = [], 0, 0, []
    for question, row in zip(questions, rows, strict=True):
        if question["set"] == "control":
            silent.append(not row["prompt_items"])
        elif question["set"] == "files":
            wanted = set(question["relevant"])
            recall.append(real_sessions.recall(row["ranked"], wanted, 10))
            lines += len(row["prompt_items"])
            relevant += sum(bool(set(sources[i]) & wanted) for i in row["prompt_items"])
    precision = f"{relevant / lines:.2f}" if lines else "-"
    return (
        f"files recall@10 {sum(recall) / len(recall):.2f}, prompt lines from a relevant"
        f" session {precision} ({lines}), controls silent {sum(silent) / len(silent):.2f}"
    )


def ask_locomo(url: str, questions: list[dict]) -> str:
    found = [conversations.search(url, q)[0] for q in questions]
    at = {
        k: sum(bool(set(q["relevant"]) & set(r[:k])) for q, r in zip(questions, found, strict=True))
        / len(questions)
        for k in (5, 10)
    }
    return f"recall_any@5 {at[5]:.3f}, @10 {at[10]:.3f} (n={len(questions)})"


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
    if args.data == "real":
        _, questions = real_sessions.load(real_sessions.DATA, None)
        asker = ask_real
    else:
        _, questions = conversations.locomo(conversations.LOCOMO)
        asker = ask_locomo
    print(f"{args.data}, default mode, vectors taken away — {machine()}", flush=True)
    for order, share in states:
        with tempfile.TemporaryDirectory(prefix="memvault-backlog-") as temp:
            copy = Path(temp) / "default"
            shutil.copytree(home, copy, ignore=shutil.ignore_patterns("serving.lock", "*.pid"))
            gone = without_vectors(copy / "memvault.db", order, share)
            with running_server(**real_sessions.MODES["default"], MEMVAULT_HOME=str(copy)) as url:
                real_sessions.wait_embedder(url)
                figures = asker(url, questions)
        state = "none" if order == "none" else f"{order}:{share:g}"
        print(f"{state:12} ({gone:,} vectors away): {figures}", flush=True)


if __name__ == "__main__":
    main()
