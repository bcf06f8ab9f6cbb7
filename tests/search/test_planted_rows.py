"""A board row is any text a person or an import wrote: its id never makes the index read
a file outside ``memory/sessions/``."""

from __future__ import annotations

from memvault.vault.board import COLUMNS

HEADER = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n"


def test_a_row_whose_id_climbs_out_of_the_sessions_folder_indexes_nothing_outside(memory):
    vault = memory.settings.vault_path
    (vault / "private").mkdir(parents=True)
    note = "# Note\n\n## Decisions\n- plantedsecretword\n"
    (vault / "private" / "note.md").write_text(note, encoding="utf-8")
    (vault / "memory" / "sessions" / "2026-01-01-0000-x").mkdir(parents=True)
    row = (
        "| 2026-01-01-0000-x/../../../private/note | a | planted | row | k | active | - "
        "| 2026-01-01 00:00 | 2026-01-01 00:00 |\n"
    )
    (vault / "memory" / "index.md").write_text("# Memory Index\n\n" + HEADER + row, "utf-8")
    assert memory.search("plantedsecretword") == []
    (hit,) = memory.search("planted row")
    assert hit.document.kind == "summary"
    assert hit.document.path == "memory/index.md"  # the row itself, no file it names
