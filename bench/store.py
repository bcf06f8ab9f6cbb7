"""Store benchmark: the same appends, reads and job claims on SQLite and on PostgreSQL.

    .venv/bin/python bench/store.py                      # a throwaway PostgreSQL cluster
    .venv/bin/python bench/store.py --postgres URL       # an existing, empty database

Prints medians and p99s in milliseconds per call (the machine is shared: quote medians).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))

from memvault.ingest import prepare
from memvault.ingest.envelope import Envelope, validate
from memvault.store.postgres import PostgresStore
from memvault.store.sqlite import SQLiteStore
from tests.helpers import envelope


def _event(session: str, n: int):
    return prepare(validate(Envelope, envelope(session, n, eventId=f"{session}-{n}")))


def _timed(calls) -> list[float]:
    spent = []
    for call in calls:
        start = time.perf_counter()
        call()
        spent.append((time.perf_counter() - start) * 1000)
    return spent


def _figures(name: str, spent: list[float]) -> str:
    spent = sorted(spent)
    p99 = spent[min(len(spent) - 1, int(len(spent) * 0.99))]
    return f"  {name:<34} median {statistics.median(spent):7.2f} ms   p99 {p99:7.2f} ms"


def run(store, count: int) -> list[str]:
    lines = []
    lines.append(
        _figures(
            "append 1 event (1 thread)",
            _timed(lambda n=n: store.append_events([_event("one", n)]) for n in range(count)),
        )
    )
    spent: list[float] = []
    lock = threading.Lock()

    def post(thread: int) -> None:
        mine = _timed(
            lambda n=n: store.append_events([_event(f"t{thread}", n)]) for n in range(count // 8)
        )
        with lock:
            spent.extend(mine)

    threads = [threading.Thread(target=post, args=(t,)) for t in range(8)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rate = len(spent) / (time.perf_counter() - started)
    lines.append(_figures(f"append 1 event (8 threads, {rate:.0f}/s)", spent))
    lines.append(
        _figures(
            "append 100 events",
            _timed(
                lambda b=b: store.append_events([_event("bulk", b * 100 + n) for n in range(100)])
                for b in range(max(1, count // 50))
            ),
        )
    )
    lines.append(
        _figures(
            "repeat 1 event (deduplicated)",
            _timed(lambda n=n: store.append_events([_event("one", n)]) for n in range(count)),
        )
    )
    lines.append(
        _figures(
            "list 50 observations",
            _timed(lambda: store.list_observations("one", limit=50) for _ in range(count)),
        )
    )
    for n in range(count):
        store.enqueue_job("work", {"n": n})

    def claim_and_finish() -> None:
        store.finish_job(store.claim_job("w", ["work"], lease_seconds=60))

    lines.append(_figures("claim + finish a job", _timed(claim_and_finish for _ in range(count))))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", help="an empty PostgreSQL database's URL")
    parser.add_argument("--count", type=int, default=400)
    args = parser.parse_args()
    cluster = None
    url = args.postgres
    if url is None:
        from tests.postgres_cluster import Cluster, binaries

        bindir = binaries()
        if bindir is None:
            sys.exit("PostgreSQL (initdb, pg_ctl) is not installed; give --postgres URL")
        # fsync=off in the throwaway cluster: compare it with SQLite at NORMAL, not FULL.
        cluster = Cluster(bindir).start()
        url = cluster.database()
    try:
        with tempfile.TemporaryDirectory() as folder:
            engines = [
                (
                    "sqlite (synchronous=NORMAL)",
                    SQLiteStore(Path(folder) / "m.db", synchronous="NORMAL"),
                ),
                ("postgres", PostgresStore(url)),
            ]
            for name, store in engines:
                print(name)
                try:
                    print("\n".join(run(store, args.count)))
                finally:
                    store.close()
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
