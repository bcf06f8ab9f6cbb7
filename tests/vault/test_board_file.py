"""memory/index.md: exact columns, prose kept, rows by others kept byte for byte."""

from __future__ import annotations

import pytest

from memvault.domain import BoardRow
from memvault.vault.board import COLUMNS, Board, BoardFormatError
from memvault.vault.table import escape_cell, split_row

SEED_FILE = (
    "# Agent Memory Index\n"
    "\n"
    "Notes a person wrote above the table.\n"
    "\n"
    "| Session ID | Agent Name | Topic | Summary | Keywords | Status | Referenced By | "
    "Started At | Updated At |\n"
    "|---|---|---|---|---|---|---|---|---|\n"
    "| 2026-05-25-1318-cursor-main-agent | cursor-main-agent | Wiki hooks | 設計 hook 的寫入流程"
    " | hooks, wiki | active | - | 2026-05-25 13:18 | 2026-05-25 14:02 |\n"
    "|2026-05-26-0900-cursor-main-agent|cursor-main-agent|未設定"
    "|sessionStart 自動註冊，尚未整理主題。"
    "|sessionStart, cursor-agent|idle|-|2026-05-26 09:00|2026-05-26 09:00|\n"
    "\n"
    "## Notes below\n"
    "\n"
    "- keep this list\n"
)


def row(session_id="2026-11-30-1432-cursor-main-agent", **changes) -> BoardRow:
    base = BoardRow(
        session_id,
        "cursor-main-agent",
        "T",
        "S",
        "k",
        "idle",
        [],
        "2026-11-30 14:32",
        "2026-11-30 14:32",
    )
    return base.with_(**changes)


def test_the_board_has_exactly_the_nine_columns_in_order():
    text = Board.parse(None).appended(row())
    header = text.splitlines()[6]
    assert split_row(header) == list(COLUMNS)


def test_a_new_board_file_gets_frontmatter_a_heading_and_the_table():
    text = Board.parse(None).appended(row())
    front = "---\ntags:\n  - memvault/board\n---\n"
    assert text.startswith(front + "# Memory Index\n\n| Session ID | Agent Name |")
    assert Board.parse(text).get(row().session_id) == row()


def test_rows_written_by_hand_are_read_as_first_class_rows():
    board = Board.parse(SEED_FILE)
    first = board.get("2026-05-25-1318-cursor-main-agent")
    assert (first.topic, first.status, first.referenced_by) == ("Wiki hooks", "active", [])
    tight = board.get("2026-05-26-0900-cursor-main-agent")
    assert tight.summary == "sessionStart 自動註冊，尚未整理主題。"


def test_appending_keeps_every_other_byte():
    text = Board.parse(SEED_FILE).appended(row())
    lines, seed = text.splitlines(keepends=True), SEED_FILE.splitlines(keepends=True)
    assert lines[:8] + lines[9:] == seed  # the new row sits right after the last row
    assert "2026-11-30-1432-cursor-main-agent" in lines[8]


def test_changing_one_row_rewrites_only_that_line():
    board = Board.parse(SEED_FILE)
    changed = board.get("2026-05-26-0900-cursor-main-agent").with_(status="active")
    text = board.changed([changed])
    before, after = SEED_FILE.splitlines(), text.splitlines()
    differing = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert differing == [7]
    assert Board.parse(text).get(changed.session_id).status == "active"


def test_removing_a_row_keeps_the_prose_around_the_table():
    text = Board.parse(SEED_FILE).changed(remove={"2026-05-25-1318-cursor-main-agent"})
    assert text == SEED_FILE.replace(SEED_FILE.splitlines(keepends=True)[6], "")


def test_windows_line_endings_are_kept():
    crlf = SEED_FILE.replace("\n", "\r\n")
    text = Board.parse(crlf).appended(row())
    assert "\n" not in text.replace("\r\n", "")


def test_a_table_is_added_below_existing_notes():
    text = Board.parse("# My memory\n\nSome notes").appended(row())
    assert text.startswith("# My memory\n\nSome notes\n\n| Session ID |")


def test_referenced_by_holds_session_ids_and_dash_means_nobody():
    board = Board.parse(
        Board.parse(None).appended(
            row(
                referenced_by=[
                    "2026-12-01-0900-cursor-main-agent",
                    "2026-12-02-1000-cursor-main-agent",
                ]
            )
        )
    )
    line = board.lines[board.row_lines[row().session_id][0]]
    assert "| 2026-12-01-0900-cursor-main-agent, 2026-12-02-1000-cursor-main-agent |" in line
    assert "| - |" in Board.parse(None).appended(row())


def test_a_table_with_other_columns_is_refused_not_rewritten():
    text = "| Session ID | Agent Name | Topic |\n|---|---|---|\n| x | y | z |\n"
    with pytest.raises(BoardFormatError, match="exactly these columns"):
        Board.parse(text)


def test_duplicate_rows_are_refused_for_changes():
    line = SEED_FILE.splitlines(keepends=True)[6]
    doubled = SEED_FILE.replace(line, line + line)
    board = Board.parse(doubled)
    with pytest.raises(BoardFormatError, match="2 rows"):
        board.get("2026-05-25-1318-cursor-main-agent")


def test_cells_stay_in_their_cell_in_obsidian():
    value = "a | b\nsecond line"
    assert escape_cell(value) == "a \\| b second line"
    text = Board.parse(None).appended(row(topic=value, summary="x|y"))
    board = Board.parse(text)
    assert board.get(row().session_id).topic == "a | b second line"
    assert board.get(row().session_id).summary == "x|y"
    line = board.lines[board.row_lines[row().session_id][0]]
    assert line.count("\n") == 1 and line.count(" | ") == 8
