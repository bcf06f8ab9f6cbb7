"""The board while an editor saves it in place: sessions register while a thread saves
``memory/index.md`` the way Obsidian does (truncated, then written whole, from a copy it
read a moment before), and each run reports what the file holds at the end.

.venv/bin/python bench/board_saves.py [--runs 8] [--sessions 200] [--every 0.1]

A sound board ends with one header and each row once. What the editor's stale copies take
off (a row registered between its read and its save) is the editor's to lose: memvault
reports that registration as failed, and the run counts it.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine

from memvault import Memory

SEEDED = 3


def one_run(sessions: int, every: float, seed: int) -> dict:
    rng = random.Random(seed)
    with (
        tempfile.TemporaryDirectory() as home,
        Memory.open(home=Path(home), embeddings="none", llm="none") as memory,
    ):
        for n in range(SEEDED):
            memory.board.register_host_session(f"seed-{n}", "claude-code")
        board = memory.board.vault_board.index_path
        done = threading.Event()

        def editor() -> None:
            saves = 0
            while not done.is_set():
                text = board.read_text(encoding="utf-8")
                time.sleep(rng.random() * 0.002)  # the person types
                lines = text.split("\n")
                for i, line in enumerate(lines):
                    if line.startswith("| 20"):
                        cells = line.split("|")
                        cells[3] = f" edited {saves} "
                        lines[i] = "|".join(cells)
                        break
                with open(board, "w", encoding="utf-8") as handle:  # in place
                    handle.write("\n".join(lines))
                saves += 1
                time.sleep(every)

        thread = threading.Thread(target=editor)
        thread.start()
        failed = 0
        try:
            for n in range(sessions):
                report = memory.board.register_host_session(f"new-{n}", "claude-code")
                failed += not report.ok
                time.sleep(0.005)
        finally:
            done.set()
            thread.join()
        text = board.read_text(encoding="utf-8")
    ids = [line.split("|")[1].strip() for line in text.split("\n") if line.startswith("| 20")]
    return {
        "headers": text.count("| Session ID |"),
        "rows": len(ids),
        "twice": sum(1 for count in collections.Counter(ids).values() if count > 1),
        "failed": failed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--every", type=float, default=0.1, help="seconds between saves")
    args = parser.parse_args()
    print(
        f"board saved in place every {args.every:g} s while {args.sessions} sessions register"
        f" ({SEEDED} rows before) — {machine()}",
        flush=True,
    )
    sound = 0
    for run in range(args.runs):
        got = one_run(args.sessions, args.every, seed=run)
        ok = got["headers"] == 1 and not got["twice"]
        sound += ok
        print(
            f"run {run + 1}: headers {got['headers']}, rows {got['rows']} of"
            f" {args.sessions + SEEDED}, ids twice {got['twice']}, registrations reported"
            f" failed {got['failed']}{'' if ok else '  ← the board is broken'}",
            flush=True,
        )
    print(f"sound boards: {sound} of {args.runs}")


if __name__ == "__main__":
    main()
