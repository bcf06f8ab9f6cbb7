"""File names a vault synced to Windows can hold: every name memvault makes, and a warning
for hand-written fragments whose names Windows refuses."""

from __future__ import annotations

from pathlib import PureWindowsPath

import pytest

from memvault.platforms import windows_name_problem
from memvault.vault.fragments import check_folder, fragment_name
from memvault.vault.maintain import summary_path
from memvault.vault.remember import Remembered

AWKWARD = [
    "CON", "nul", "Aux", "COM1", "lpt9", "a.", "x ", "..", "trailing...", " - ",
    '<a>b:"c"/d\\e|f?g*h', "我的雲端硬碟", "notes. ", "NUL.md",
]  # fmt: skip

FRAGMENT = """---
tags: [agent-memory]
project: demo
date: 2026-11-30
summary: A fact worth keeping.
importance: 5
---
- the fact
"""


@pytest.mark.parametrize("text", AWKWARD)
def test_every_fragment_name_memvault_makes_is_one_windows_holds(text):
    for name in (fragment_name(text, "2026-11-30", text), fragment_name("p", "2026-11-30", text)):
        assert windows_name_problem(name) is None, name


@pytest.mark.parametrize("project", AWKWARD)
def test_every_project_summary_name_is_one_windows_holds(tmp_path, project):
    path = summary_path(tmp_path, project)
    assert windows_name_problem(path.name) is None, path.name


def test_a_device_named_project_gets_its_own_summary_file(tmp_path):
    """``CON.md`` is the console on Windows; ``CON`` and a project called ``CON_`` still
    never share a file."""
    con = summary_path(tmp_path, "CON")
    assert con.name != "CON.md" and con.name.startswith("CON_ ")
    assert summary_path(tmp_path, "CON_").name == "CON_.md"
    assert summary_path(tmp_path, "con") != con


@pytest.mark.parametrize("name", ["why? - 2026-11-30 - x.md", "nul.md", "a|b.md"])
def test_a_hand_written_fragment_windows_cannot_hold_is_warned_about(tmp_path, name):
    (tmp_path / name).write_text(FRAGMENT, encoding="utf-8")
    report = check_folder(tmp_path)
    found = [p for p in report.problems if p.rule == "windows-name"]
    assert len(found) == 1 and found[0].severity == "warning" and "rename it" in found[0].message


def test_a_fragment_with_a_name_windows_holds_gets_no_such_warning(tmp_path):
    (tmp_path / "demo - 2026-11-30 - 我的 note.md").write_text(FRAGMENT, encoding="utf-8")
    assert not [p for p in check_folder(tmp_path).problems if p.rule == "windows-name"]


def test_a_saved_fragments_path_is_answered_with_forward_slashes_on_windows_too():
    """The path in a save's answer is the same on every machine sharing the vault."""
    root = PureWindowsPath("G:\\我的雲端硬碟\\Obsidian\\Agent")
    saved = Remembered("created", root / "agent-memory" / "demo - 2026-11-30 - x.md")
    answer = saved.to_dict(root)  # type: ignore[arg-type]
    assert answer["path"] == "agent-memory/demo - 2026-11-30 - x.md"
