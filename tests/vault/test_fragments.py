"""Fragment files: safe names and the rules `memvault fragments check` reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata

import pytest

from memvault.vault.fragments import check_folder, fragment_name, free_path, safe_part

GOOD = """---
tags:
  - agent-memory
  - api
project: demo-app
date: 2026-11-30
summary: Data-loading functions are named fetchX.
importance: 0.7
confidence: 0.9
source: conversation
---
- rule: data loaders are named fetchX, not getX
- why: one verb for every network read ∴ grep finds them all
"""


def write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_names_follow_the_pattern_and_are_safe_everywhere():
    name = fragment_name("demo/app: v2", "2026-11-30", 'Why "fetch"? [[x]] #tag ^b | a.b')
    assert name == "demo app v2 - 2026-11-30 - Why fetch x tag b a b.md"
    assert name.count(".") == 1


def test_names_are_nfc_and_bounded():
    decomposed = unicodedata.normalize("NFD", "café 記憶")
    assert safe_part(decomposed) == unicodedata.normalize("NFC", "café 記憶")
    long = fragment_name("p", "2026-11-30", "決策" * 200)
    assert len(long.encode()) <= 190


def test_a_bad_date_is_refused():
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        fragment_name("p", "30/11/2026", "x")


def test_colliding_names_get_deterministic_suffixes(tmp_path):
    name = fragment_name("p", "2026-11-30", "x")
    first = free_path(tmp_path, name)
    first.write_text("a")
    second = free_path(tmp_path, name)
    second.write_text("b")
    assert (first.name, second.name, free_path(tmp_path, name).name) == (
        "p - 2026-11-30 - x.md",
        "p - 2026-11-30 - x 2.md",
        "p - 2026-11-30 - x 3.md",
    )


def test_a_fragment_that_follows_the_rules_has_no_problems(tmp_path):
    write(tmp_path, "demo-app - 2026-11-30 - fetch prefix.md", GOOD)
    report = check_folder(tmp_path)
    assert (report.files, report.problems) == (1, [])


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        (lambda t: t.replace("source:", "type: decision\nsource:"), "forbidden-type"),
        (
            lambda t: t.replace("source:", "related_fragments: [a]\nsource:"),
            "forbidden-related_fragments",
        ),
        (lambda t: t + "- see [[Other note]]\n", "wikilinks"),
        (lambda t: t.replace("  - agent-memory\n", ""), "tags"),
        (lambda t: t.replace("project: demo-app\n", ""), "project"),
        (lambda t: t.replace("date: 2026-11-30", "date: yesterday"), "date"),
        (lambda t: t.replace("summary: Data-loading functions are named fetchX.\n", ""), "summary"),
        (lambda t: t.replace("importance: 0.7", "importance: 7"), "importance"),
        (lambda t: t.replace("confidence: 0.9", "confidence: high"), "confidence"),
        (lambda t: "no properties at all\n", "frontmatter"),
    ],
)
def test_each_rule_is_reported_as_an_error(tmp_path, change, rule):
    write(tmp_path, "demo-app - 2026-11-30 - x.md", change(GOOD))
    errors = check_folder(tmp_path).errors
    assert rule in {p.rule for p in errors}, errors


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        (lambda t: t + "# Title\n", "title-heading"),
        (lambda t: t + "## 根因\n", "heading-tree"),
        (lambda t: t + "So then we " + "went on and on " * 20 + "\n", "narrative"),
    ],
)
def test_bodies_not_in_the_compressed_form_are_warned_about(tmp_path, change, rule):
    write(tmp_path, "demo-app - 2026-11-30 - x.md", change(GOOD))
    report = check_folder(tmp_path)
    assert not report.errors
    assert rule in {p.rule for p in report.problems}


def test_a_file_name_not_in_the_pattern_is_warned_about(tmp_path):
    write(tmp_path, "notes about fetch.md", GOOD)
    assert {p.rule for p in check_folder(tmp_path).problems} == {"file-name"}


def test_the_archive_is_checked_and_hidden_folders_are_not(tmp_path):
    write(
        tmp_path,
        "_archive/demo-app - 2026-01-01 - old.md",
        GOOD.replace("date: 2026-11-30", "date: 2026-01-01"),
    )
    write(tmp_path, ".trash/junk.md", "nothing")
    report = check_folder(tmp_path)
    assert report.files == 1 and report.problems == []


def test_the_check_command(tmp_path):
    vault = tmp_path / "vault"
    write(vault / "agent-memory", "demo-app - 2026-11-30 - ok.md", GOOD)
    write(vault / "agent-memory", "demo-app - 2026-11-30 - bad.md", GOOD + "[[link]]\n")
    env = {**os.environ, "MEMVAULT_HOME": str(tmp_path / "home"), "MEMVAULT_VAULT": str(vault)}
    result = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "fragments", "check", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 1
    found = json.loads(result.stdout)
    assert found["files"] == 2
    assert [(p["path"], p["rule"]) for p in found["problems"]] == [
        ("agent-memory/demo-app - 2026-11-30 - bad.md", "wikilinks")
    ]
    (vault / "agent-memory" / "demo-app - 2026-11-30 - bad.md").unlink()
    clean = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "fragments", "check"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert clean.returncode == 0 and "all follow the rules" in clean.stdout
