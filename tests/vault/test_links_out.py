"""Nothing outside the vault is read or written through a symbolic link: the indexer (and
so search and the context block), the fragments merged into, the export, the board and its
snapshots all pass over a link leading out, say so once in the log, and `doctor` lists it.
Links that stay inside the vault keep working."""

from __future__ import annotations

import logging
import os

from memvault.archive import Export
from memvault.config import Settings
from memvault.doctor.finding import OK, WARN
from memvault.doctor.storage import check_links
from memvault.vault.remember import Draft


def _moved_and_linked(memory, word: str, where) -> tuple:
    """A fragment about ``word``, moved to ``where`` and linked back from its place."""
    made = memory.remember(Draft("demo", f"The {word} decision", [f"{word} is the rule"]))
    where.mkdir(parents=True, exist_ok=True)
    target = where / made.path.name
    os.replace(made.path, target)
    os.symlink(target, made.path)
    return made.path, target


def _found(memory, word: str) -> list[str]:
    return [hit.document.key for hit in memory.search(word, limit=5)]


def test_a_fragment_linked_from_outside_the_vault_is_not_indexed_nor_exported(
    memory, tmp_path, caplog
):
    vault = memory.settings.vault_path
    out_link, outside = _moved_and_linked(memory, "zebraquartz", tmp_path / "elsewhere")
    in_link, _ = _moved_and_linked(memory, "lemonwhistle", vault / "notes")
    with caplog.at_level(logging.WARNING, logger="memvault.vault"):
        memory.index.index_now(vectors=False)
        memory.index.index_now(vectors=False)  # a second pass is not logged again
    assert _found(memory, "zebraquartz") == []
    assert _found(memory, "lemonwhistle") == [in_link.relative_to(vault).as_posix()]
    told = [r.getMessage() for r in caplog.records if "leading out of the vault" in r.message]
    assert len(told) == 1 and str(out_link) in told[0] and str(outside) in told[0]

    exported = [r for r in Export(memory).records() if r.get("kind") == "fragment"]
    texts = " ".join(str(r) for r in exported)
    assert "zebraquartz" not in texts and "lemonwhistle" in texts

    finding = check_links(Settings(home=memory.settings.home))
    assert finding.level == WARN
    assert "1 symbolic link(s)" in finding.finding and str(out_link) in finding.finding


def test_a_fragment_indexed_before_it_became_a_link_out_is_dropped(memory, tmp_path):
    made = memory.remember(Draft("demo", "The quillfjord rule", ["quillfjord matters"]))
    memory.index.index_now(vectors=False)
    assert _found(memory, "quillfjord")
    outside = tmp_path / "elsewhere" / made.path.name
    outside.parent.mkdir()
    os.replace(made.path, outside)
    os.symlink(outside, made.path)
    memory.index.index_now(vectors=False)
    assert _found(memory, "quillfjord") == []


def test_a_board_linked_out_of_the_vault_is_neither_read_nor_appended_to(memory, tmp_path):
    board = memory.settings.vault_path / "memory" / "index.md"
    memory.board.register_session(agent="agent-one")
    outside = tmp_path / "outside.md"
    outside.write_text(board.read_text(encoding="utf-8"), encoding="utf-8")
    before = outside.read_bytes()
    board.unlink()
    os.symlink(outside, board)
    report = memory.board.register_session(agent="agent-two")
    assert not report.ok and "symbolic link leading out of the vault" in report.message
    assert outside.read_bytes() == before
    assert board.is_symlink()
    finding = check_links(Settings(home=memory.settings.home))
    assert finding.level == WARN and str(board) in finding.finding


def test_a_board_linked_inside_the_vault_keeps_working(memory):
    vault = memory.settings.vault_path
    memory.board.register_session(agent="agent-one")
    board = vault / "memory" / "index.md"
    kept = vault / "notes" / "board.md"
    kept.parent.mkdir()
    os.replace(board, kept)
    os.symlink(kept, board)
    memory.board.register_session(agent="agent-two")
    rows = [line for line in kept.read_text(encoding="utf-8").splitlines() if "agent-two" in line]
    assert len(rows) == 1 and board.is_symlink()
    assert check_links(Settings(home=memory.settings.home)).level == OK


def test_a_snapshot_linked_out_of_the_vault_is_not_written_through(memory, tmp_path):
    made = memory.board.register_session(agent="agent-one", manual=True, content="Started.")
    snapshot = memory.settings.vault_path / "memory" / "sessions" / f"{made.session_id}.md"
    outside = tmp_path / "outside.md"
    os.replace(snapshot, outside)
    os.symlink(outside, snapshot)
    before = outside.read_bytes()
    report = memory.board.update_session(made.session_id, "Changed through the link.")
    assert not report.ok and "leads outside" in report.message
    assert outside.read_bytes() == before
