"""The board is never left half-changed, never loses what others wrote, and never mistakes
a look-alike table, a code example or a merge conflict for itself."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from memvault.vault import board_files, shared_file
from memvault.vault.board import COLUMNS, BoardFormatError
from memvault.vault.board_files import BoardError
from memvault.vault.snapshot import Snapshot

HAND_ROW = (
    "| 2026-11-01-0900-hand-agent | hand-agent | notes | by hand | hand | active | - "
    "| 2026-11-01 09:00 | 2026-11-01 09:00 |\n"
)
HEADER = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n"


def refuse_verification(monkeypatch):
    def refuse(self, rows, gone):
        raise BoardError("could not verify (refused by the test)")

    monkeypatch.setattr(board_files.BoardFiles, "_verify_board", refuse)


def test_a_registration_that_fails_verification_leaves_the_board_as_it_found_it(board, monkeypatch):
    assert board.register("cursor-main-agent", manual=True).ok
    before = board.index_path.read_bytes()
    refuse_verification(monkeypatch)
    report = board.register("cursor-main-agent")
    assert not report.ok and "could not verify" in report.message
    assert board.index_path.read_bytes() == before


@pytest.mark.parametrize("operation", ["update", "continue", "organize", "archive"])
def test_a_rewrite_that_fails_verification_leaves_the_board_as_it_found_it(
    board, clock, monkeypatch, operation
):
    first = board.register("cursor-main-agent", manual=True).session_id
    idle = board.register("cursor-main-agent").session_id
    clock.advance(days=30)
    before = board.index_path.read_bytes()
    snapshots = {p.name: p.read_bytes() for p in board.sessions_dir.iterdir()}
    refuse_verification(monkeypatch)
    if operation == "update":
        report = board.update(first, Snapshot.parse("## Decisions\n- use PKCE\n"))
    elif operation == "continue":
        report = board.continue_from(first, idle, agent="cursor-main-agent")
    elif operation == "organize":
        report = board.organize(stale_days=1)
    else:
        report = board.archive(first)
    assert not report.ok
    assert board.index_path.read_bytes() == before
    assert {p.name: p.read_bytes() for p in board.sessions_dir.iterdir()} == snapshots
    assert not board.archive_dir.exists() or not any(board.archive_dir.iterdir())


def test_a_failed_change_keeps_what_a_person_appended_meanwhile(board, monkeypatch):
    session = board.register("cursor-main-agent", manual=True).session_id
    before = board.index_path.read_text(encoding="utf-8")
    refuse_verification(monkeypatch)
    write = shared_file.write_atomic

    appended = []

    def rename_then_someone_appends(path, text):
        write(path, text)
        if not appended:  # once: right after memvault's own write
            appended.append(path)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(HAND_ROW)

    monkeypatch.setattr(shared_file, "write_atomic", rename_then_someone_appends)
    assert not board.update(session, Snapshot.parse("## Decisions\n- x\n")).ok
    assert board.index_path.read_text(encoding="utf-8") == before + HAND_ROW


def test_a_new_row_is_appended_to_the_file_not_written_over_it(board):
    board.register("cursor-main-agent")
    inode = board.index_path.stat().st_ino
    board.register("cursor-main-agent")
    assert board.index_path.stat().st_ino == inode
    assert len(board.board().rows) == 2


def test_a_rewrite_carries_over_a_line_appended_just_before_its_rename(board, monkeypatch):
    session = board.register("cursor-main-agent", manual=True).session_id
    write = shared_file.write_atomic

    def someone_appends_then_rename(path, text):
        with open(path, "a", encoding="utf-8") as handle:  # lands in the file being replaced
            handle.write(HAND_ROW)
        write(path, text)

    monkeypatch.setattr(shared_file, "write_atomic", someone_appends_then_rename)
    report = board.update(session, Snapshot.parse("## Decisions\n- use PKCE\n"))
    assert report.ok, report.message
    text = board.index_path.read_text(encoding="utf-8")
    assert text.count(HAND_ROW) == 1
    assert board.board().get(session).status == "active"


def _saved_in_place(path, text: str) -> None:
    """A person's editor saving the board: the file truncated, then written whole (as
    Obsidian saves), not renamed into place."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def test_a_save_in_place_that_lands_while_memvault_rewrites_is_kept(board, monkeypatch):
    """A person saves the board (a topic edited, a row added by hand) between memvault's
    read and its rename: their save is not taken for lines appended to the old file (the
    board would hold two copies of itself), and memvault's change is made on it."""
    session = board.register("cursor-main-agent", manual=True).session_id
    other = board.register("cursor-main-agent", manual=True, topic="Old topic").session_id
    write = shared_file.write_atomic
    saved = []

    def someone_saves_then_rename(path, text):
        if not saved:  # once: memvault read the board, the person saves it, then the rename
            mine = path.read_text(encoding="utf-8").replace("| Old topic |", "| Edited |")
            _saved_in_place(path, mine + HAND_ROW)
            saved.append(mine + HAND_ROW)
        write(path, text)

    monkeypatch.setattr(shared_file, "write_atomic", someone_saves_then_rename)
    report = board.update(session, Snapshot.parse("## Decisions\n- use PKCE\n"))
    assert report.ok, report.message
    text = board.index_path.read_text(encoding="utf-8")
    assert text.count("| Session ID |") == 1 and text.count(HAND_ROW) == 1
    assert board.board().get(other).topic == "Edited"
    assert board.board().get(session).status == "active"


def test_a_board_read_in_the_middle_of_a_save_is_read_once_the_save_is_done(board):
    """The editor has truncated the board and not yet written it: memvault waits for the
    save instead of taking an empty board and writing its row into it."""
    first = board.register("cursor-main-agent", manual=True, topic="Kept").session_id
    whole = board.index_path.read_text(encoding="utf-8") + HAND_ROW
    truncated = threading.Event()

    def save_slowly():
        with open(board.index_path, "w", encoding="utf-8") as handle:
            handle.flush()
            truncated.set()
            time.sleep(0.02)
            handle.write(whole)

    saver = threading.Thread(target=save_slowly)
    saver.start()
    truncated.wait(5)
    report = board.register("cursor-main-agent")
    saver.join()
    assert report.ok, report.message
    text = board.index_path.read_text(encoding="utf-8")
    assert text.count("| Session ID |") == 1 and text.count(HAND_ROW) == 1
    assert board.board().get(first).topic == "Kept"
    assert board.board().get(report.session_id) is not None


def test_a_save_in_place_that_keeps_the_size_is_still_a_change(tmp_path):
    path = tmp_path / "index.md"
    path.write_text("| a | one |\n", encoding="utf-8")
    with shared_file.SharedFile(path) as shared:
        _saved_in_place(path, "| a | two |\n")  # same length, other bytes
        assert not shared.unchanged()
        assert not shared.append("| b | new |\n")
        assert not shared.replace("| a | mine |\n")
    assert path.read_text(encoding="utf-8") == "| a | two |\n"


def test_a_board_that_is_not_utf8_is_refused_naming_the_line(board):
    board.register("cursor-main-agent")
    with board.index_path.open("ab") as handle:
        handle.write(b"| caf\xe9 |\n")
    with pytest.raises(BoardFormatError, match=r"not UTF-8.*line 10"):
        board.board()
    before = board.index_path.read_bytes()
    report = board.register("cursor-main-agent")
    assert not report.ok and "not UTF-8" in report.message
    assert board.index_path.read_bytes() == before


@pytest.mark.parametrize(
    ("header", "line"),
    [
        (HEADER.replace("Topic", "Subject"), 3),
        (HEADER.replace("Updated At", "Updated  At"), 3),
        (HEADER.replace("| Keywords ", ""), 3),
        (HEADER.replace("Session ID", "ID"), 3),
    ],
)
def test_a_board_header_that_differs_from_the_schema_is_refused_and_nothing_appended(
    board, header, line
):
    board.index_path.parent.mkdir(parents=True)
    board.index_path.write_text("# Memory Index\n\n" + header + HAND_ROW, encoding="utf-8")
    before = board.index_path.read_bytes()
    with pytest.raises(BoardFormatError, match=f"line {line}: the board table must have"):
        board.board()
    report = board.register("cursor-main-agent")
    assert not report.ok and f"line {line}" in report.message
    assert board.index_path.read_bytes() == before


def test_old_mac_line_endings_are_refused_not_taken_for_an_empty_board(board):
    board.index_path.parent.mkdir(parents=True)
    text = ("# Memory Index\n\n" + HEADER + HAND_ROW).replace("\n", "\r")
    board.index_path.write_bytes(text.encode())
    report = board.register("cursor-main-agent")
    assert not report.ok and "CR-only" in report.message
    assert board.index_path.read_bytes() == text.encode()


def test_a_table_inside_a_code_fence_is_an_example_not_the_board(board):
    board.index_path.parent.mkdir(parents=True)
    example = "# Memory Index\n\nThe board looks like this:\n\n```markdown\n" + HEADER
    example += HAND_ROW + "```\n"
    board.index_path.write_text(example, encoding="utf-8")
    session = board.register("cursor-main-agent").session_id
    text = board.index_path.read_text(encoding="utf-8")
    assert text.startswith(example)
    assert [row.session_id for row in board.board().rows] == [session]


@pytest.mark.parametrize("marker", ["<<<<<<< HEAD", "=======", ">>>>>>> theirs"])
def test_merge_conflict_markers_in_the_board_are_refused_naming_the_line(board, marker):
    board.index_path.parent.mkdir(parents=True)
    text = "# Memory Index\n\n" + HEADER + HAND_ROW + marker + "\n" + HAND_ROW
    board.index_path.write_text(text, encoding="utf-8")
    report = board.register("cursor-main-agent")
    assert not report.ok and "line 6: a merge-conflict marker" in report.message
    assert board.index_path.read_text(encoding="utf-8") == text


def test_a_row_id_that_leads_outside_the_sessions_folder_is_never_read(board, vault):
    (vault / "x").mkdir()
    (vault / "x" / "note.md").write_text("private note\n", encoding="utf-8")
    evil = "2026-01-01-0000-x/../../../x/note"
    board.index_path.parent.mkdir(parents=True)
    row = HAND_ROW.replace("2026-11-01-0900-hand-agent", evil)
    board.index_path.write_text("# Memory Index\n\n" + HEADER + row, encoding="utf-8")
    assert board.board().get(evil) is not None  # the row is read as it is …
    with pytest.raises(BoardError, match="not a Memory Session ID"):
        board.snapshot_text(evil)  # … but its id never becomes a path
    assert not board.archive(evil, force=True).ok
    assert (vault / "x" / "note.md").exists()


def test_session_show_names_a_row_id_that_is_no_session_id_instead_of_reading_it(tmp_path):
    vault = tmp_path / "home" / "vault"
    (vault / "memory").mkdir(parents=True)
    evil = "2026-01-01-0000-x/../../../x/note"
    row = HAND_ROW.replace("2026-11-01-0900-hand-agent", evil)
    (vault / "memory" / "index.md").write_text("# Memory Index\n\n" + HEADER + row, "utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "session", "show", evil],
        env={**os.environ, "MEMVAULT_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "is not a Memory Session ID" in result.stderr
