"""Synced vaults: a conflict copy of the board, named as the common sync clients name
them, is merged back; a copy of a snapshot is reported with what to do."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from memvault import Memory
from memvault.config import Settings
from memvault.doctor.storage import check_sync_conflicts
from memvault.vault.board import row_cells
from memvault.vault.sync_conflicts import board_copies, conflict_copies
from memvault.vault.table import format_row

COPY_NAMES = [
    "index (1).md",  # Google Drive, Windows
    "index 2.md",  # iCloud
    "index.sync-conflict-20261204-101010-ABCDEFG.md",  # Syncthing
    "index (conflicted copy).md",  # Dropbox
    "index (Mac's conflicted copy 2026-12-04).md",  # Dropbox, naming the other machine
    "index (conflicted copy 2026-12-04 101010).md",  # Nextcloud
    "index-DESKTOP-ABC.md",  # OneDrive, the other computer's name
]
NEW_ID = "2026-12-04-1010-laptop-main-agent"


def _line(cells: list[str]) -> str:
    return format_row(cells) + "\n"


def diverged(memory: Memory, copy_name: str) -> dict[str, str]:
    """A board, and a copy of it as the other machine left it: one row it updated later,
    one new row, one row it never had, one row it archived, one row organized away here,
    and a line of its own prose."""
    board = memory.board
    ids = {
        name: board.register_session(manual=True, topic=f"{name} topic").session_id
        for name in ("updated", "kept", "archived")
    }
    started = memory.context.start_session(
        {"sessionId": "host-idle", "project": "p", "cwd": "/p", "agentId": "cursor"}
    )
    organized = started.board.session_id
    index = board.index_path
    before = index.read_text(encoding="utf-8")
    board.organize()  # the idle row goes: organized away here
    assert organized not in index.read_text(encoding="utf-8")
    rows = {row.session_id: row for row in board.rows()}
    theirs = before
    updated = row_cells(rows[ids["updated"]])
    updated[2], updated[8] = "Changed on the laptop", "2099-01-01 00:00"

    def first_cell(line: str) -> str:
        return line.strip().strip("|").split("|")[0].strip()

    theirs = "".join(
        _line(updated) if first_cell(line) == ids["updated"] else line
        for line in theirs.splitlines(True)
        if first_cell(line) != ids["kept"]
    )
    theirs += _line(
        [
            NEW_ID,
            "laptop-main-agent",
            "From the laptop",
            "s",
            "k",
            "active",
            "-",
            "2026-12-04 10:10",
            "2026-12-04 10:10",
        ]
    )
    theirs += "\nNotes written on the laptop.\n"
    (index.parent / "archive" / ids["archived"]).mkdir(parents=True)  # synced from the laptop
    (index.parent / copy_name).write_text(theirs, encoding="utf-8")
    return {**ids, "organized": organized}


@pytest.mark.parametrize("copy_name", COPY_NAMES)
def test_a_conflict_copy_of_the_board_is_merged_back_and_moved_aside(copy_name, tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        ids = diverged(memory, copy_name)
        memory.board.sync()
        index = memory.board.index_path
        text = index.read_text(encoding="utf-8")
        rows = {row.session_id: row for row in memory.board.rows()}
        assert rows[ids["updated"]].topic == "Changed on the laptop"  # the newer one won
        assert ids["kept"] in rows and NEW_ID in rows  # the union
        assert ids["archived"] not in rows and ids["organized"] not in rows  # stay gone
        assert "Notes written on the laptop." in text  # the hand prose of the copy
        assert text.count("| Session ID") == 1
        assert not (index.parent / copy_name).exists()
        aside = index.parent / "sync-conflicts"
        assert (aside / copy_name).is_file()
        (note,) = aside.glob("* (what was merged).md")
        said = note.read_text(encoding="utf-8")
        assert f"- {NEW_ID}" in said and f"- {ids['updated']}" in said
        assert f"- {ids['archived']}" in said and f"- {ids['organized']}" in said
        # The store's mirror has the merged board, and doctor has nothing left to report.
        assert {r.session_id for r in memory.store.board_rows()} == set(rows)
        assert check_sync_conflicts(memory.settings).level == "ok"


def test_a_newer_row_on_this_side_wins_over_the_copys(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        mine = memory.board.register_session(manual=True, topic="Mine").session_id
        index = memory.board.index_path
        theirs = index.read_text(encoding="utf-8").replace("Mine", "Theirs")
        theirs = theirs.replace(memory.board.row_in_file(mine).updated_at, "2000-01-01 00:00")
        (index.parent / "index (1).md").write_text(theirs, encoding="utf-8")
        memory.board.sync()
        assert memory.board.row_in_file(mine).topic == "Mine"


def test_a_copy_that_cannot_be_merged_stays_and_is_reported(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        row = memory.board.register_session(manual=True, topic="Twice").session_id
        index = memory.board.index_path
        line = next(ln for ln in index.read_text(encoding="utf-8").splitlines(True) if row in ln)
        copy = index.parent / "index (1).md"
        copy.write_text(index.read_text(encoding="utf-8") + line, encoding="utf-8")
        memory.board.sync()
        assert copy.exists()
        finding = check_sync_conflicts(memory.settings)
        assert finding.level == "warn" and "memory/index (1).md" in finding.finding


def test_a_conflict_copy_of_a_snapshot_is_reported_by_doctor_health_and_the_viewer(server):
    settings = Settings(home=server.home)
    created = httpx.post(
        f"{server.url}/agentmemory/board/register",
        json={"agentName": "cursor-main-agent", "manual": True, "topic": "Synced"},
        timeout=10,
    )
    assert created.status_code < 300, created.text
    snapshot = next((settings.vault_path / "memory" / "sessions").glob("*.md"))
    copy = snapshot.with_name(f"{snapshot.stem}.sync-conflict-20261204-101010-ABCDEFG.md")
    copy.write_text(snapshot.read_text(encoding="utf-8") + "\n- from the laptop\n", "utf-8")
    finding = check_sync_conflicts(settings)
    assert finding.level == "warn"
    assert f"memory/sessions/{copy.name} (a copy of memory/sessions/{snapshot.name})" in (
        finding.finding
    )
    assert "delete the copy" in finding.fix
    health = httpx.get(f"{server.url}/agentmemory/health", timeout=10).json()
    (reported,) = health["vault"]["syncConflicts"]
    assert reported["path"] == f"memory/sessions/{copy.name}"
    assert "Obsidian" in reported["whatToDo"]
    page = httpx.get(f"{server.url}/health", timeout=10)
    assert "Sync conflict copies" in page.text and copy.name in page.text
    copy.unlink()
    assert check_sync_conflicts(settings).level == "ok"


def test_a_board_a_sync_client_puts_in_place_with_the_old_time_and_size_is_seen(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        row = memory.board.register_session(manual=True, topic="Aaaa").session_id
        memory.board.sync()
        index = memory.board.index_path
        stat = index.stat()
        arrived = index.with_name(".index.md.tmp")
        arrived.write_text(index.read_text(encoding="utf-8").replace("Aaaa", "Bbbb"), "utf-8")
        os.utime(arrived, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        os.replace(arrived, index)  # what Syncthing and Dropbox do: rename into place
        assert index.stat().st_size == stat.st_size
        assert memory.board.sync()
        assert memory.store.board_row(row).topic == "Bbbb"


def test_names_that_only_look_like_copies_are_left_alone(tmp_path):
    memory_dir = Path(tmp_path)
    for name in ("index.md", "index-notes.md", "indexes.md", "my index (1).md", "index-2.md"):
        (memory_dir / name).write_text("x", encoding="utf-8")
    sessions = memory_dir / "memory" / "sessions"
    sessions.mkdir(parents=True)
    for name in ("2026-12-04-1010-main-agent.md", "2026-12-04-1010-main-agent-2.md"):
        (sessions / name).write_text("x", encoding="utf-8")
    assert board_copies(memory_dir) == []
    assert conflict_copies(memory_dir) == []
