"""What memvault writes opens cleanly in Obsidian on every OS."""

from __future__ import annotations

import re
import unicodedata

from memvault.vault.board import Board
from memvault.vault.snapshot import Snapshot

FORBIDDEN = re.compile(r'[\\/:*?"<>|#^\[\]]')
RESERVED = {
    "CON",
    "PRN",
    "AUX",
    "NUL",
    *(f"COM{i}" for i in range(1, 10)),
    *(f"LPT{i}" for i in range(1, 10)),
}


def test_every_file_memvault_writes_has_a_portable_name(board, clock, vault):
    source = board.register("cursor-main-agent", manual=True, topic="a/b: c|d?").session_id
    current = board.register("claude-code-main-agent").session_id
    board.continue_from(current, source, agent="claude-code-main-agent")
    board.release(current, source)
    board.archive(source)
    for path in (vault / "memory").rglob("*"):
        name = path.name
        if name == ".memvault.lock":
            continue
        assert not FORBIDDEN.search(name), name
        assert not name.startswith(".") and not name.endswith((" ", "."))
        assert name.split(".")[0].upper() not in RESERVED
        assert len(name.encode()) <= 255
        assert name == unicodedata.normalize("NFC", name)
        assert name.count(".") <= 1, f"{name}: several dots break Obsidian Sync on Android"


def test_the_table_renders_pipes_and_newlines_stay_inside_cells(board):
    report = board.register(
        "cursor-main-agent",
        manual=True,
        topic="pipes | in topic",
        summary="line one\nline two | with pipe",
    )
    text = board.index_path.read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if report.session_id in ln)
    unescaped = re.sub(r"\\\|", "", line)
    assert unescaped.count("|") == 10  # nine cells: ten real pipes
    row = Board.parse(text).get(report.session_id)
    assert row.topic == "pipes | in topic"
    assert row.summary == "line one line two | with pipe"


def test_snapshot_metadata_values_cannot_break_their_table(board):
    report = board.register("cursor-main-agent", manual=True, topic="x | y")
    snapshot = board.snapshot(report.session_id)
    assert snapshot.metadata["Topic"] == "x / y"
    assert isinstance(snapshot, Snapshot)
