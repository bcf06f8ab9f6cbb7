"""8 processes × 25 mixed board operations on one vault: nothing is lost, the file parses."""

from __future__ import annotations

import json
import multiprocessing
import random
import time

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


HAND_LINES = 300


def hand_appender(index_path: str, count: int, seed: int) -> None:
    """A person (or a tool that takes no lock) appending rows to the board as they go."""
    rng = random.Random(seed)
    for n in range(count):
        line = (
            f"| 2026-12-01-0000-hand-{n} | hand-agent | hand topic {n} | written by hand {n} "
            f"| hand | active | - | 2099-01-01 00:00 | 2099-01-01 00:00 |\n"
        )
        with open(index_path, "a", encoding="utf-8") as handle:
            handle.write(line)
        time.sleep(rng.uniform(0, 0.004))


def board_worker(vault: str, seed: int, out: str) -> None:
    """Mixed operations that write the board: registrations, updates, continuations,
    releases, organize (for real) and archives."""
    rng = random.Random(seed)
    board = SessionBoard(vault)
    mine: list[str] = []
    log = {"registered": [], "archived": [], "deleted": [], "failed": []}
    for _ in range(OPERATIONS):
        choice = rng.choice(["register", "manual", "update", "continue", "organize", "archive"])
        if choice in ("register", "manual") or not mine:
            report = board.register(f"agent-{seed}", manual=choice == "manual")
            if report.ok:
                mine.append(report.session_id)
                log["registered"].append(report.session_id)
        elif choice == "update":
            report = board.update(rng.choice(mine), Snapshot.parse("## Decisions\n- keep it\n"))
        elif choice == "continue":
            report = board.continue_from(rng.choice(mine), rng.choice(mine), agent="x")
            if not report.ok and "cannot continue itself" in report.message:
                continue
        elif choice == "archive":
            target = rng.choice(mine)
            report = board.archive(target, force=True)
            if report.ok:
                mine.remove(target)
                log["archived"].append(target)
        else:
            report = board.organize(stale_days=100_000)
            if report.ok:
                log["deleted"].extend(report.details["deleted"])
                mine = [sid for sid in mine if sid not in report.details["deleted"]]
        # Another worker's organize may delete this worker's idle rows.
        gone = "left the board" in report.message or "is not on the board" in report.message
        if not report.ok and not gone:
            log["failed"].append([choice, report.message])
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(log, handle)


def test_board_writers_beside_an_unlocked_appender_lose_no_hand_line_and_leave_no_orphan(
    tmp_path,
):
    vault = tmp_path / "vault"
    board = SessionBoard(vault)
    assert board.register("seed-agent", manual=True).ok  # the board exists before the race
    context = multiprocessing.get_context("spawn")
    outs = [tmp_path / f"log-{i}.json" for i in range(PROCESSES)]
    writers = [
        context.Process(target=board_worker, args=(str(vault), 700 + i, str(out)))
        for i, out in enumerate(outs)
    ]
    appender = context.Process(target=hand_appender, args=(str(board.index_path), HAND_LINES, 7))
    for process in [*writers, appender]:
        process.start()
    for process in [appender, *writers]:
        process.join(180)
        assert process.exitcode == 0

    text = board.index_path.read_text(encoding="utf-8")
    lines = text.splitlines()
    lost = [n for n in range(HAND_LINES) if f"| written by hand {n} |" not in text]
    assert not lost, f"{len(lost)} hand-written lines were lost: {lost[:10]}"
    for n in range(HAND_LINES):
        assert sum(f"| written by hand {n} |" in line for line in lines) == 1

    logs = [json.loads(out.read_text(encoding="utf-8")) for out in outs]
    registered = {sid for log in logs for sid in log["registered"]}
    archived = {sid for log in logs for sid in log["archived"]}
    deleted = {sid for log in logs for sid in log["deleted"]}
    parsed = Board.parse(text)
    on_board = {row.session_id for row in parsed.rows if row.agent_name.startswith("agent-")}
    assert on_board - registered == set(), "rows on the board whose id no caller was given"
    # (An idle row organize deleted frees its id, which a registration may take again.)
    assert registered - archived - deleted <= on_board, (
        "a reported Session ID is missing from the board"
    )
    failures = [f for log in logs for f in log["failed"]]
    assert not failures, failures
