"""An import never reads or writes through a name that leads out of its folder: a file
of the vault that is a link to elsewhere, or a board Session ID that would become a
snapshot path outside ``memory/sessions/``."""

from __future__ import annotations

from tests.archive.conftest import restore

TEXT = "---\nproject: p\nsummary: s\nimportance: 0.5\n---\n- a fact\n"


def test_a_fragment_file_that_is_a_link_out_of_the_vault_is_neither_read_nor_replaced(
    target, tmp_path
):
    outside = tmp_path / "elsewhere" / "secret.md"
    outside.parent.mkdir()
    outside.write_text(TEXT, encoding="utf-8")
    folder = target.settings.fragments_path
    folder.mkdir(parents=True)
    (folder / "x.md").symlink_to(outside)

    report = restore(target, {"kind": "fragment", "path": "x.md", "text": TEXT}, strategy="replace")

    # Not "existing": that would tell what the file outside says.
    assert report.counts["fragment"].refused == 1, report.to_dict()
    assert "x.md" in report.problems[0].error
    assert (folder / "x.md").is_symlink()
    assert outside.read_text(encoding="utf-8") == TEXT


def test_a_session_whose_board_id_would_leave_the_sessions_folder_is_refused_naming_it(target):
    escaping = "2026-01-01-0000-x/../../../x/note"
    session = {
        "kind": "session",
        "id": "s1",
        "project": "p",
        "cwd": "/p",
        "boardSessionId": escaping,
    }

    report = restore(target, session)

    assert report.counts["session"].refused == 1, report.to_dict()
    assert escaping in report.problems[0].error
    assert target.store.get_session("s1") is None
