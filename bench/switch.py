"""What the interpreter's switch interval does to a request beside busy background work.

A thread that writes to SQLite (as the store's writer does for each event: a short
transaction of a few statements, the GIL released around each) runs beside a thread that
computes in pure Python (as indexing and fragment extraction do). Each statement gives the
GIL away, and getting it back waits until the computing thread is made to let go: up to
the switch interval. Prints the write's latency with CPython's default interval (5 ms) and
with the one a memvault server sets (1 ms, `memvault.background.favour_requests`).

    .venv/bin/python bench/switch.py              # 400 writes per case, 5 rounds
    .venv/bin/python bench/switch.py --writes 20 --rounds 1   # a smoke run
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine

from memvault.background import SWITCH_INTERVAL_SECONDS

DEFAULT_INTERVAL = 0.005
ROWS = 8  # statements per write, about an event's


def writes_beside_a_busy_thread(interval: float, writes: int) -> list[float]:
    """Milliseconds per write transaction while another thread computes."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    stop = threading.Event()

    def compute() -> None:
        total = 0
        while not stop.is_set():
            for n in range(10_000):
                total += n * n

    busy = threading.Thread(target=compute)
    busy.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            conn = sqlite3.connect(Path(folder) / "w.db", isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")  # the disk is not what is measured
            conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
            took = []
            for _ in range(writes):
                started = time.perf_counter()
                conn.execute("BEGIN IMMEDIATE")
                for _ in range(ROWS):
                    conn.execute("INSERT INTO t (b) VALUES (?)", ("x" * 200,))
                conn.execute("COMMIT")
                took.append((time.perf_counter() - started) * 1000)
                time.sleep(0.005)  # events arrive at 200/s
            conn.close()
    finally:
        stop.set()
        busy.join()
        sys.setswitchinterval(previous)
    return took


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * p / 100), len(ordered) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"switch interval — {machine()}")
    for interval in (DEFAULT_INTERVAL, SWITCH_INTERVAL_SECONDS):
        p50s, p99s = [], []
        for _ in range(args.rounds):
            took = writes_beside_a_busy_thread(interval, args.writes)
            p50s.append(statistics.median(took))
            p99s.append(percentile(took, 99))
        print(
            f"switch interval {interval * 1000:.0f} ms: a write of {ROWS} rows beside a busy "
            f"thread, median over {args.rounds} rounds: p50 {statistics.median(p50s):.2f} ms, "
            f"p99 {statistics.median(p99s):.2f} ms (p99 per round: "
            + ", ".join(f"{p:.1f}" for p in p99s)
            + ")"
        )


if __name__ == "__main__":
    main()
