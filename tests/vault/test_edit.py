"""The fragment edit write path on its own: fact lines as people write them, line endings
kept, and a file that is not there or cannot be read refused with nothing written."""

from __future__ import annotations

import pytest

from memvault.vault.edit import Edit, edit_fragment
from memvault.vault.remember import Draft, FragmentRefused, remember


@pytest.fixture
def fragment(tmp_path):
    draft = Draft(project="p", summary="Loaders are named fetchX.", facts=["a: 1", "b: 2"])
    return tmp_path, remember(tmp_path, draft).path


def test_a_fact_given_with_its_list_marker_is_the_same_fact(fragment):
    folder, path = fragment
    edit_fragment(folder, path, Edit(remove_facts=["- a: 1"], add_facts=["- c: 3", "b: 2"]))
    assert path.read_text(encoding="utf-8").endswith("---\n- b: 2\n- c: 3\n")


def test_windows_line_endings_are_kept_through_an_edit(fragment):
    folder, path = fragment
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    edit_fragment(folder, path, Edit(summary="Loaders: fetchX.", add_facts=["c: 3"]))
    written = path.read_bytes()
    assert b"\n" not in written.replace(b"\r\n", b"")
    assert written.endswith(b"- a: 1\r\n- b: 2\r\n- c: 3\r\n")
    assert b"summary: 'Loaders: fetchX.'\r\n" in written


def test_a_fragment_whose_frontmatter_cannot_be_read_is_refused_and_kept(fragment):
    folder, path = fragment
    path.write_text("---\nsummary: [unclosed\n---\n- a: 1\n", encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(FragmentRefused, match="cannot be read"):
        edit_fragment(folder, path, Edit(importance=0.9))
    assert path.read_bytes() == before


def test_a_file_that_is_gone_is_not_written_again(fragment):
    folder, path = fragment
    path.unlink()
    with pytest.raises(FileNotFoundError):
        edit_fragment(folder, path, Edit(importance=0.9))
    assert not path.exists()
