"""A name that becomes a path stays inside the folder it belongs to."""

from __future__ import annotations

import os

import pytest

from memvault.vault.files import OutsideFolder, inside


def test_a_name_inside_its_folder_is_that_folders_path_whether_or_not_it_exists(tmp_path):
    assert inside(tmp_path, "a/b.md") == tmp_path / "a" / "b.md"
    (tmp_path / "c.md").write_text("x", encoding="utf-8")
    assert inside(tmp_path, "c.md") == tmp_path / "c.md"


@pytest.mark.parametrize(
    "name",
    [
        "../x.md",
        "2026-01-01-0000-x/../../../../../x/note.md",
        "a/../../x.md",
        "/etc/passwd",
        "",
        ".",
        "a\x00.md",
    ],
)
def test_a_name_that_leaves_its_folder_or_names_nothing_is_refused_naming_it(tmp_path, name):
    folder = tmp_path / "sessions"
    folder.mkdir()
    with pytest.raises(OutsideFolder) as refused:
        inside(folder, name)
    assert repr(name) in str(refused.value)


def test_a_symbolic_link_that_leads_out_of_the_folder_is_refused(tmp_path):
    folder, elsewhere = tmp_path / "fragments", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, folder / "linked")
    with pytest.raises(OutsideFolder, match=r"linked/note\.md"):
        inside(folder, "linked/note.md")
