"""Properties are read with YAML and changed line by line: a person's formatting stays."""

from __future__ import annotations

import datetime as dt

import pytest

from memvault.vault import frontmatter as fm
from tests.helpers import fixtures_dir

NOTE = """---
title: API naming   # a comment a person wrote
aliases: [fetch prefix rule, 接口命名规则]
tags:
  - decision
  - api/naming
importance: 0.5
project: "[[demo-app]]"
---
# Body

Text.
"""


def test_properties_are_read_with_dates_as_iso_strings():
    props = fm.read("---\ndate: 2026-09-29\ncreated: 2026-09-29T02:41:00\nn: 3\n---\nbody")
    assert props == {"date": "2026-09-29", "created": "2026-09-29T02:41:00", "n": 3}


def test_setting_one_property_changes_only_its_lines():
    text = fm.with_properties(NOTE, {"importance": 0.8})
    assert text == NOTE.replace("importance: 0.5", "importance: 0.8")


def test_a_list_property_is_replaced_whole_and_others_keep_their_style():
    text = fm.with_properties(NOTE, {"tags": ["decision", "agent-memory"]})
    assert "tags:\n  - decision\n  - agent-memory\nimportance: 0.5" in text
    assert "aliases: [fetch prefix rule, 接口命名规则]" in text
    assert "title: API naming   # a comment a person wrote" in text
    assert fm.read(text)["tags"] == ["decision", "agent-memory"]


def test_new_properties_go_at_the_end_and_removed_ones_go_away():
    text = fm.with_properties(NOTE, {"summary": "a: tricky, value"}, remove=("title",))
    props = fm.read(text)
    assert "title" not in props and props["summary"] == "a: tricky, value"
    assert text.endswith(
        "project: \"[[demo-app]]\"\nsummary: 'a: tricky, value'\n---\n# Body\n\nText.\n"
    )


def test_dates_are_written_unquoted_for_obsidian():
    text = fm.with_properties("body\n", {"date": dt.date(2026, 11, 30)})
    assert text == "---\ndate: 2026-11-30\n---\nbody\n"


def test_a_note_without_properties_gets_a_block():
    assert fm.read("just text") == {}
    assert fm.with_properties("just text", {"a": 1}) == "---\na: 1\n---\njust text"


def test_windows_line_endings_are_kept():
    text = fm.with_properties(NOTE.replace("\n", "\r\n"), {"importance": 1})
    assert "\n" not in text.replace("\r\n", "")


@pytest.mark.parametrize("bad", ["---\n: : :\n---\n", "---\n- a list\n---\n"])
def test_unreadable_properties_are_named(bad):
    with pytest.raises(fm.FrontmatterError):
        fm.read(bad)


def test_the_shared_obsidian_notes_round_trip_byte_for_byte():
    for path in (fixtures_dir() / "obsidian" / "vault").rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        props = fm.read(text)
        if props:
            key = next(iter(props))
            lines, _ = fm.split(text)
            assert fm.with_properties(text, {}) == text, path.name
            added = fm.with_properties(text, {"memvault": 1})
            assert fm.read(added) == {**props, "memvault": 1}
            assert fm.with_properties(added, {}, remove=("memvault",)) == text, path.name
            assert fm.read(text)[key] == props[key]
            assert lines is not None
