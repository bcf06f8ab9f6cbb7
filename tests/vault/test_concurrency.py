"""8 processes × 25 mixed board operations on one vault: nothing is lost, the file parses."""

from __future__ import annotations

import json
import multiprocessing
import random

import pytest

from memvault.vault.board import Board
from memvault.vault.lifecycle import SessionBoard
from memvault.vault.snapshot import CONTINUES, DECISIONS, Snapshot

PROCESSES = 8
OPERATIONS = 25


def worker(vault: str, seed: int, out: str) -> None:
    """Run mixed operations and record what each report claimed."""
    rng = random.Random(seed)
    board = SessionBoard(vault)
    mine: list[str] = []
    log = {"registered": [], "references": [], "released": [], "decisions": [], "failed": []}
    for step in range(OPERATIONS):
        choice = rng.choice(["register", "manual", "update", "continue", "release", "organize"])
        if choice in ("register", "manual") or not mine:
            report = board.register(f"agent-{seed}", manual=choice == "manual")
            if report.ok:
                mine.append(report.session_id)
                log["registered"].append(report.session_id)
        elif choice == "update":
            decision = f"decision {seed}-{step}"
            target = rng.choice(mine)
            report = board.update(target, Snapshot.parse(f"## Decisions\n- {decision}\n"))
            if report.ok:
                log["decisions"].append([target, decision])
        elif choice == "continue":
            rows = board.board().rows
            sources = [r.session_id for r in rows if r.session_id not in mine]
            if not sources:
                continue
            current, source = rng.choice(mine), rng.choice(sources)
            report = board.continue_from(current, source, agent=f"agent-{seed}")
            if report.ok:
                log["references"].append([current, source])
        elif choice == "release" and log["references"]:
            current, source = rng.choice(log["references"])
            report = board.release(current, source)
            if report.ok:
                log["released"].append([current, source])
        else:
            report = board.organize(dry_run=True)
        if not report.ok:
            log["failed"].append([choice, report.message])
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(log, handle)


@pytest.mark.parametrize("round_number", range(3))
def test_concurrent_processes_lose_no_row_reference_or_update(tmp_path, round_number):
    vault = tmp_path / "vault"
    context = multiprocessing.get_context("spawn")
    outs = [tmp_path / f"log-{i}.json" for i in range(PROCESSES)]
    processes = [
        context.Process(target=worker, args=(str(vault), 100 * round_number + i, str(out)))
        for i, out in enumerate(outs)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(120)
        assert process.exitcode == 0

    logs = [json.loads(out.read_text(encoding="utf-8")) for out in outs]
    board = SessionBoard(vault)
    parsed = Board.parse(board.index_path.read_text(encoding="utf-8"))
    assert not parsed.unreadable
    ids = [row.session_id for row in parsed.rows]
    assert len(ids) == len(set(ids)), "a Session ID appears twice"

    registered = [sid for log in logs for sid in log["registered"]]
    assert len(registered) == len(set(registered)), "two registrations reported one id"
    assert set(registered) == set(ids), "a reported Session ID is missing from the board"

    released = {tuple(pair) for log in logs for pair in log["released"]}
    established = [tuple(pair) for log in logs for pair in log["references"]]
    for current, source in established:
        if (current, source) in released:
            continue
        assert current in parsed.get(source).referenced_by, f"{source} lost {current}"
        assert source in board.snapshot(current).items(CONTINUES)

    for target, decision in (pair for log in logs for pair in log["decisions"]):
        assert decision in board.snapshot(target).items(DECISIONS), f"{decision} was lost"

    failures = [f for log in logs for f in log["failed"]]
    assert not failures, failures
