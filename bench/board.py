"""Session board benchmark: single operations at 1,000 rows, and 8-process registration.

.venv/bin/python bench/board.py
"""

from __future__ import annotations

import json
import multiprocessing
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine, running_server

from memvault.domain import BoardRow
from memvault.vault.board import Board, format_time, row_cells
from memvault.vault.board_files import local_now
from memvault.vault.files import write_atomic
from memvault.vault.lifecycle import SessionBoard
from memvault.vault.snapshot import Snapshot

ROWS = 1000
SNAPSHOTS = 300
REPEAT = 30
PROCESSES = 8
PER_PROCESS = 60


def seed(vault: Path) -> list[str]:
    """A board of ROWS rows (a third idle, most active, some stale), SNAPSHOTS snapshots."""
    board = SessionBoard(vault)
    now = local_now()
    rows, text = [], None
    for i in range(ROWS):
        status = "idle" if i % 3 == 0 else ("stale" if i % 10 == 1 else "active")
        sid = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}-{i // 100:02d}{i % 100:02d}-seed-agent"
        rows.append(
            BoardRow(
                sid,
                "seed-agent",
                f"Topic {i}",
                f"Summary of work {i}.",
                "seed, bench",
                status,
                [],
                format_time(now),
                format_time(now),
            )
        )
    lines = Board.parse(None)
    text = lines.render()
    from memvault.vault.table import format_row

    text += "".join(format_row(row_cells(r)) + "\n" for r in rows)
    write_atomic(board.index_path, text)
    with_snapshot = [r for r in rows if r.status != "idle"][:SNAPSHOTS]
    for row in with_snapshot:
        content = Snapshot.parse(
            f"## Current Context\n{row.summary}\n## Decisions\n- d{row.topic}\n"
        )
        content.metadata.update({"Session ID": row.session_id, "Status": row.status})
        write_atomic(board.snapshot_path(row.session_id), content.render(row.session_id))
    return [r.session_id for r in with_snapshot]


def timed(operation) -> list[float]:
    times = []
    for i in range(REPEAT):
        began = time.perf_counter()
        report = operation(i)
        times.append((time.perf_counter() - began) * 1000)
        assert report.ok, report.message
    return times


def register_many(vault: str, n: int, ready, go, out: multiprocessing.Queue) -> None:
    board = SessionBoard(vault)
    ids = []
    ready.release()
    go.wait()
    for _ in range(n):
        report = board.register(f"bench-{multiprocessing.current_process().name[-1]}-agent")
        assert report.ok, report.message
        ids.append(report.session_id)
    out.put(ids)


def session_start_latency(vault: Path, n: int = 50) -> list[float]:
    """POST /session/start against a real server whose board has ROWS rows: what a host's
    session-start hook waits for (it gives up after 0.8-1.5 s)."""
    times = []
    with running_server(MEMVAULT_VAULT=str(vault)) as url:
        for i in range(n):
            body = json.dumps(
                {"sessionId": f"host-{i}", "project": "bench", "cwd": "/b", "agentId": "cursor"}
            ).encode()
            request = urllib.request.Request(
                f"{url}/agentmemory/session/start",
                data=body,
                headers={"content-type": "application/json"},
            )
            began = time.perf_counter()
            with urllib.request.urlopen(request, timeout=10) as response:
                answer = json.load(response)
            times.append((time.perf_counter() - began) * 1000)
            assert answer["memorySessionId"], answer
    return times


def main() -> None:
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as folder:
        vault = Path(folder)
        with_snapshot = seed(vault)
        board = SessionBoard(vault)
        board.organize(dry_run=True)  # first read of the snapshots' Continues From
        figures = {
            "register (auto, idle)": timed(lambda i: board.register("bench-agent")),
            "register (manual, with snapshot)": timed(
                lambda i: board.register("bench-agent", manual=True, topic=f"T{i}")
            ),
            "update (snapshot merge + row)": timed(
                lambda i: board.update(with_snapshot[i], Snapshot.parse(f"## Decisions\n- n{i}\n"))
            ),
            "continue": timed(
                lambda i: board.continue_from(
                    with_snapshot[i], with_snapshot[-1 - i], agent="bench-agent"
                )
            ),
            "organize --dry-run": timed(lambda i: board.organize(dry_run=True)),
            "list (priority order)": timed(lambda i: _ok(board.rows())),
        }
        rows = len(board.board().rows)
        print(
            f"single operations on a board of {ROWS:,}-{rows:,} rows, {SNAPSHOTS} snapshots "
            f"(median / p95 of {REPEAT}):"
        )
        for name, times in figures.items():
            p95 = sorted(times)[int(len(times) * 0.95) - 1]
            print(f"  {name:34s} {statistics.median(times):6.1f} ms / {p95:6.1f} ms")
        latency = session_start_latency(vault)
        p95 = sorted(latency)[int(len(latency) * 0.95) - 1]
        print(
            f"  {'POST /session/start (HTTP, registers)':34s} "
            f"{statistics.median(latency):6.1f} ms / {p95:6.1f} ms"
        )
        began = time.perf_counter()
        organized = board.organize()
        print(
            f"  organize (deleting {len(organized.details['deleted'])} idle rows) "
            f"{(time.perf_counter() - began) * 1000:6.1f} ms"
        )

    with tempfile.TemporaryDirectory() as folder:
        context = multiprocessing.get_context("spawn")
        out = context.Queue()
        ready, go = context.Semaphore(0), context.Event()
        workers = [
            context.Process(
                target=register_many, args=(folder, PER_PROCESS, ready, go, out), name=f"w{i}"
            )
            for i in range(PROCESSES)
        ]
        for worker in workers:
            worker.start()
        for _ in workers:
            ready.acquire()  # every process has started and imported memvault
        began = time.perf_counter()
        go.set()
        reported = [sid for _ in workers for sid in out.get(timeout=300)]
        elapsed = time.perf_counter() - began
        for worker in workers:
            worker.join()
        on_board = {row.session_id for row in SessionBoard(Path(folder)).board().rows}
        lost = set(reported) - on_board
        print(
            f"concurrent registration, {PROCESSES} processes x {PER_PROCESS}: "
            f"{len(reported) / elapsed:,.0f} registrations/s, "
            f"{len(on_board):,} rows, {len(lost)} lost"
        )


class _ok:
    ok = True
    message = ""

    def __init__(self, _: object) -> None:
        pass


if __name__ == "__main__":
    main()
