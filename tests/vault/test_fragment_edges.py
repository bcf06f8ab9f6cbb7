"""Edge cases found in review: odd names, line endings, quoted keys, odd tags, bad files."""

from __future__ import annotations

import pytest

from memvault.analyzer import tokens
from memvault.vault import frontmatter as fm
from memvault.vault.fragments import check_folder, fragment_name
from memvault.vault.remember import Draft, FragmentRefused, remember


def draft(**changes):
    base = Draft(
        project="demo",
        summary="Loaders are named fetchX.",
        facts=["rule: fetchX not getX"],
        date="2026-11-30",
        source="s1",
    )
    for key, value in changes.items():
        setattr(base, key, value)
    return base


def test_a_very_long_project_name_is_bounded_not_a_hang():
    name = fragment_name("p" * 500, "2026-11-30", "d" * 500)
    assert len(name.encode()) <= 190 and " - 2026-11-30 - " in name


def test_merging_into_a_windows_file_keeps_its_line_endings(tmp_path):
    first = remember(tmp_path, draft())
    first.path.write_bytes(first.path.read_bytes().replace(b"\n", b"\r\n"))
    remember(tmp_path, draft(facts=["rule: fetchX not getX", "scope: api"], tags=["x"]))
    data = first.path.read_bytes()
    assert b"\r\r" not in data and data.count(b"\n") == data.count(b"\r\n")
    assert b"- scope: api\r\n" in data


def test_a_quoted_key_with_a_colon_survives_a_neighbouring_edit():
    text = '---\nsummary: old\n"a:b": keep\n---\nbody\n'
    assert fm.with_properties(text, {"summary": "new"}) == text.replace("old", "new")


def test_tags_written_as_text_are_kept_and_made_a_list(tmp_path):
    first = remember(tmp_path, draft())
    text = first.path.read_text(encoding="utf-8")
    text = text.replace("tags:\n  - agent-memory", "tags: api, agent-memory")
    first.path.write_text(text, encoding="utf-8")
    remember(tmp_path, draft(tags=["naming"]))
    assert fm.read(first.path.read_text(encoding="utf-8"))["tags"] == [
        "api",
        "agent-memory",
        "naming",
    ]


@pytest.mark.parametrize("fact", ["", "two\nlines"])
def test_facts_must_be_single_non_empty_lines(tmp_path, fact):
    with pytest.raises(FragmentRefused):
        remember(tmp_path, draft(facts=[fact]))
    assert list(tmp_path.glob("*.md")) == []


def test_a_file_that_is_not_utf8_is_skipped_by_saves_and_reported_by_check(tmp_path):
    (tmp_path / "demo - 2026-01-01 - old.md").write_bytes(
        "---\nsummary: é\n---\n".encode("latin-1")
    )
    assert remember(tmp_path, draft()).action == "created"
    assert "encoding" in {p.rule for p in check_folder(tmp_path).errors}


def test_fragments_in_subfolders_are_merged_into_but_not_the_archive(tmp_path):
    nested = tmp_path / "demo"
    nested.mkdir()
    first = remember(nested, draft())
    assert remember(tmp_path, draft()).path == first.path


def test_a_byte_order_mark_is_kept_through_a_merge(tmp_path):
    first = remember(tmp_path, draft())
    first.path.write_bytes(b"\xef\xbb\xbf" + first.path.read_bytes())
    remember(tmp_path, draft(facts=["rule: fetchX not getX", "scope: api"]))
    assert first.path.read_bytes().startswith(b"\xef\xbb\xbf---\n")


def test_properties_cannot_override_managed_fields_and_are_added_on_merge(tmp_path):
    with pytest.raises(FragmentRefused, match="`importance` is set by its own field"):
        remember(tmp_path, draft(properties={"importance": 5}))
    first = remember(tmp_path, draft())
    remember(tmp_path, draft(properties={"reviewed": True}))
    assert fm.read(first.path.read_text(encoding="utf-8"))["reviewed"] is True


def test_strings_that_look_like_numbers_or_booleans_are_quoted():
    for value in ("1e3", "0o17", "yes", "null", "true", ".inf", "0x1F"):
        assert fm.read("---\n" + fm.render_property("k", value) + "\n---\n")["k"] == value
        assert fm.render_property("k", value).startswith("k: '")


def test_the_analyzer_keeps_accented_words_whole_and_reads_rare_ideographs():
    assert tokens("naïveté Ångström") == ["naïveté", "ångström"]
    assert tokens("C# vs C++ in R") == ["c", "vs", "c", "r"]
    assert tokens("𠀀𠀁𠀂") == ["𠀀𠀁", "𠀁𠀂"]
