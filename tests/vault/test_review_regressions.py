"""Hand edits racing a write, failures mid-operation, and files people shape by hand."""

from __future__ import annotations

from memvault import Memory
from memvault.vault import board_files, lifecycle, shared_file
from memvault.vault.board import Board
from memvault.vault.snapshot import CONTEXT, SUPERSEDED, Snapshot
from tests.helpers import envelope
from tests.vault.test_board_file import SEED_FILE

ID = "2026-11-30-1432-cursor-main-agent"


def edit_board_during_merge(board, monkeypatch, edit):
    """Make ``edit(text) -> text`` happen between reading the board and writing it."""
    merge = lifecycle.SessionBoard._merge

    def merge_then_edit(self, *args, **kwargs):
        change = merge(self, *args, **kwargs)
        board.index_path.write_text(
            edit(board.index_path.read_text(encoding="utf-8")), encoding="utf-8"
        )
        return change

    monkeypatch.setattr(lifecycle.SessionBoard, "_merge", merge_then_edit)


def test_a_hand_edit_to_the_same_row_during_an_update_is_kept(board, monkeypatch):
    board.register("cursor-main-agent")
    edit_board_during_merge(
        board, monkeypatch, lambda t: t.replace("sessionStart, cursor-agent", "hand, keywords")
    )
    report = board.update(ID, Snapshot.parse("## Decisions\n- x\n"))
    assert report.ok, report.message
    row = board.board().get(ID)
    assert (row.keywords, row.status) == ("hand, keywords", "active")


def test_a_row_deleted_by_hand_during_an_update_fails_cleanly(board, monkeypatch, vault):
    board.register("cursor-main-agent")
    edit_board_during_merge(
        board, monkeypatch, lambda t: "".join(ln for ln in t.splitlines(True) if ID not in ln)
    )
    report = board.update(ID, Snapshot.parse("## Decisions\n- x\n"))
    assert not report.ok and "left the board" in report.message
    assert not (vault / "memory" / "sessions" / f"{ID}.md").exists()


def fail_board_writes(monkeypatch):
    write = board_files.write_atomic

    def refuse_index(path, text):
        if path.name == "index.md":
            raise OSError("disk full")
        write(path, text)

    def refuse_append(self, data):
        raise OSError("disk full")

    monkeypatch.setattr(board_files, "write_atomic", refuse_index)
    monkeypatch.setattr(lifecycle, "write_atomic", refuse_index)
    monkeypatch.setattr(shared_file, "write_atomic", refuse_index)
    monkeypatch.setattr(shared_file.SharedFile, "_append_bytes", refuse_append)


def test_a_failed_board_write_puts_the_snapshot_back(board, monkeypatch, vault):
    board.register(
        "cursor-main-agent", manual=True, content=Snapshot.parse("## Decisions\n- first\n")
    )
    path = vault / "memory" / "sessions" / f"{ID}.md"
    before = path.read_bytes()
    fail_board_writes(monkeypatch)
    report = board.update(ID, Snapshot.parse("## Decisions\n- second\n"))
    assert not report.ok and "disk full" in report.message
    assert path.read_bytes() == before


def test_a_failed_manual_registration_leaves_no_snapshot_behind(board, monkeypatch, vault):
    fail_board_writes(monkeypatch)
    report = board.register("cursor-main-agent", manual=True)
    assert not report.ok and report.session_id is None
    assert list((vault / "memory" / "sessions").glob("*.md")) == []


def test_snapshot_content_written_by_hand_survives_an_update(board, vault):
    board.register(
        "cursor-main-agent", manual=True, content=Snapshot.parse("## Decisions\n- first\n")
    )
    path = vault / "memory" / "sessions" / f"{ID}.md"
    text = path.read_text(encoding="utf-8")
    text = text.replace(f"# Session: {ID}\n", f"# Session: {ID}\n\nA note under the title.\n")
    text = text.replace("| Updated At |", "| Project | demo-app |\n| Updated At |")
    text = text.replace(
        "## Files / Artifacts\n\nNone",
        "## Files / Artifacts\n\n- setup script\n  ```sh\n  # install deps\n\n  npm ci\n  ```",
    )
    path.write_text(text, encoding="utf-8")
    assert board.update(ID, Snapshot.parse("## Decisions\n- second\n")).ok
    after = path.read_text(encoding="utf-8")
    for kept in (
        "A note under the title.",
        "| Project | demo-app |",
        "# install deps",
        "  npm ci",
        "- first",
        "- second",
    ):
        assert kept in after, kept


def test_resolving_a_context_line_with_parentheses_works(board):
    board.register(
        "cursor-main-agent",
        manual=True,
        content=Snapshot.parse("## Current Context\nUse Redis (for cache).\n"),
    )
    report = board.update(ID, Snapshot.parse("## Current Context\n[done] Use Redis (for cache).\n"))
    assert report.ok, report.message
    snapshot = board.snapshot(ID)
    assert snapshot.items(CONTEXT) == []
    assert snapshot.items(SUPERSEDED) == ["[done] Use Redis (for cache)."]


def test_a_board_with_a_byte_order_mark_is_read_not_duplicated(board, vault):
    (vault / "memory").mkdir()
    board.index_path.write_text("\ufeff" + SEED_FILE, encoding="utf-8")
    assert board.register("cursor-main-agent").ok
    text = board.index_path.read_text(encoding="utf-8")
    assert text.startswith("\ufeff# Agent Memory Index") and text.count("| Session ID |") == 1
    assert len(Board.parse(text).rows) == 3


def test_a_line_separator_inside_a_cell_does_not_hide_rows(board, vault):
    (vault / "memory").mkdir()
    board.index_path.write_text(SEED_FILE.replace("設計 hook", "設計\u2028hook"), encoding="utf-8")
    assert board.register("cursor-main-agent").ok
    assert len(board.board().rows) == 3
    assert "設計\u2028hook" in board.index_path.read_text(encoding="utf-8")


def test_a_host_session_whose_row_was_organized_away_gets_a_new_one(tmp_path):
    with Memory.open(home=tmp_path / "home") as memory:
        memory.observe(envelope("host-9", agentId="cursor"))
        first = memory.board.register_host_session("host-9", "cursor")
        assert memory.board.organize().details["deleted"] == [first.session_id]
        assert not memory.board.vault_board.has_row(first.session_id)
        again = memory.board.register_host_session("host-9", "cursor")
        assert again.ok and memory.board.vault_board.has_row(again.session_id)
        assert "existing" not in again.details
        assert memory.reads.session("host-9").board_session_id == again.session_id
