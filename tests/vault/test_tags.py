"""Fragments as Obsidian reads them: tags it takes for tags, file names without trailing
punctuation, and `fragments check` keeping to the fragments folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata

import pytest

from memvault.errors import InvalidInput
from memvault.vault.fragments import fragment_name, tag_name
from memvault.vault.remember import Draft


def _draft(**overrides) -> Draft:
    fields = {
        "project": "demo-app",
        "summary": "Loaders are named fetchX.",
        "facts": ["rule: loaders are named fetchX"],
    }
    return Draft(**{**fields, **overrides})


@pytest.mark.parametrize(
    ("written", "tag"),
    [
        ("needs review", "needs-review"),
        ("#hash", "hash"),
        ("  ##two  words here ", "two-words-here"),
        ("project/sub", "project/sub"),
        ("node.js", "node-js"),
        ("决策 记录", "决策-记录"),
        ("v2", "v2"),
    ],
)
def test_a_tag_is_written_the_way_obsidian_takes_it(written, tag):
    assert tag_name(written) == tag


@pytest.mark.parametrize("written", ["2026", "#", "  ", "!!", "#123"])
def test_a_tag_obsidian_cannot_take_is_refused_by_name(written):
    with pytest.raises(ValueError, match="tag"):
        tag_name(written)


def test_remembered_tags_are_normalised_in_the_file(memory):
    done = memory.remember(_draft(tags=["needs review", "#hash", "hash"]))
    properties = memory.get(_id(memory, done.path)).properties
    assert properties["tags"] == ["agent-memory", "needs-review", "hash"]


def test_tags_merged_into_a_near_duplicate_are_normalised(memory):
    first = memory.remember(_draft(tags=["api"]))
    again = memory.remember(_draft(tags=["needs review", "#api"]))
    assert (again.action, again.path) == ("merged", first.path)
    properties = memory.get(_id(memory, first.path)).properties
    assert properties["tags"] == ["agent-memory", "api", "needs-review"]


def test_a_draft_with_a_tag_of_digits_only_is_refused_and_nothing_is_written(memory):
    with pytest.raises(InvalidInput, match="2026"):
        memory.remember(_draft(tags=["ok", "2026"]))
    assert not list(memory.settings.fragments_path.glob("*.md"))


@pytest.mark.parametrize(
    "description",
    ["数据加载函数命名为前缀。", "Why fetch?", "Named fetchX!", "列表、", "done…", "a.b."],
)
def test_a_fragment_file_name_never_ends_in_punctuation(description):
    stem = fragment_name("p", "2026-11-30", description).removesuffix(".md")
    assert not _is_punctuation(stem[-1]), stem


def test_a_pipeline_style_chinese_summary_names_its_file_without_the_full_stop(memory):
    done = memory.remember(_draft(summary="数据加载函数命名为前缀。", facts=["规则：fetch 前缀"]))
    assert done.path.name.endswith(" - 数据加载函数命名为前缀.md"), done.path.name


def test_fragments_check_does_not_report_a_persons_notes_outside_the_fragments_folder(tmp_path):
    home = tmp_path / "home"
    vault = home / "vault"
    (vault / "wiki").mkdir(parents=True)
    (vault / "wiki" / "my note.md").write_text("# My note\n\nno properties here\n", "utf-8")
    (vault / "journal.md").write_text("---\ntype: daily\n---\n[[wiki/my note]]\n", "utf-8")
    fragments = vault / "agent-memory"
    fragments.mkdir()
    # A link in the fragments folder to a person's note elsewhere is not a fragment.
    (fragments / "pinned.md").symlink_to(vault / "journal.md")
    (fragments / "wiki").symlink_to(vault / "wiki", target_is_directory=True)
    env = {**os.environ, "MEMVAULT_HOME": str(home), "MEMVAULT_EMBEDDINGS": "none"}
    cli = [sys.executable, "-m", "memvault.cli"]
    saved = subprocess.run(
        [*cli, "save", "--project", "p", "--summary", "A real fragment.", "--fact", "a: b"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert saved.returncode == 0, saved.stderr
    checked = subprocess.run(
        [*cli, "fragments", "check", "--json"], env=env, capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)
    assert (report["files"], report["problems"]) == (1, [])


def _id(memory, path) -> str:
    return path.relative_to(memory.settings.fragments_path).with_suffix("").as_posix()


def _is_punctuation(char: str) -> bool:
    return unicodedata.category(char).startswith("P")
