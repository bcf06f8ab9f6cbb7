"""MEMVAULT_LANGUAGE: what agents and people read, in zh-Hant (the default), zh-Hans or en."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from memvault import Memory, language
from memvault.config import Settings
from memvault.install import rules
from tests.context.conftest import TOKENS

_CHINESE = re.compile("[\u3400-\u9fff]")


def test_every_language_the_setting_takes_has_its_strings():
    field = Settings.model_fields["language"]
    assert set(field.annotation.__args__) == set(language.LANGUAGES)
    assert Settings().language == language.DEFAULT == "zh-Hant"


def test_the_default_keeps_the_strings_memvault_always_wrote(memory):
    line = memory.context.context(project="empty").text
    assert line == "📖 agent memory：读取 0 个碎片 → nothing relevant yet"
    assert language.strings().unset_topic == "未設定"
    assert "📋 agent memory：本次是否有需写入碎片？[有/无]" in rules.render(Settings().language)


def test_in_english_the_block_and_its_report_line_are_english(tmp_path):
    with Memory.open(home=tmp_path / "home", language="en") as memory:
        memory.remember(TOKENS)
        found = memory.context.context(
            project="demo-app", query="how long is the access token valid"
        )
        nothing = memory.context.context(project="demo-app", query="kubernetes helm chart upgrade")
    assert found.text.startswith("📖 agent memory: read 1 fragments → login tokens: ")
    assert nothing.text == "📖 agent memory: read 0 fragments → nothing relevant found"
    assert not _CHINESE.search(found.text + nothing.text)


def test_english_rules_hold_no_chinese_but_the_phrases_a_user_may_say():
    text = rules.render("en")
    prose = [line for line in text.splitlines() if not line.startswith("| ")]
    assert not [line for line in prose if _CHINESE.search(line)]
    assert "`📋 agent memory: anything to write as a fragment this time? [yes/no]`" in text
    for operation in rules.OPERATIONS:
        for phrase in rules.OPERATIONS[operation][2]:
            assert f"`{phrase}`" in text  # 整理 memory is still understood, so still named


@pytest.mark.parametrize("value", ["zh-Hans", "en"])
def test_rules_follow_the_setting(value, monkeypatch):
    monkeypatch.setenv("MEMVAULT_LANGUAGE", value)
    assert rules.render(Settings().language) == rules.render(value)
    assert language.strings(value).read_report in rules.render(Settings().language)


def test_another_language_is_refused_naming_the_choices(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "status"],
        env={**os.environ, "MEMVAULT_HOME": str(tmp_path), "MEMVAULT_LANGUAGE": "fr"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "MEMVAULT_LANGUAGE (got 'fr'): must be one of 'zh-Hant', 'zh-Hans' or 'en'" in (
        result.stderr
    )
    with pytest.raises(ValueError, match="choose one of zh-Hant, zh-Hans, en"):
        language.strings("fr")


def test_in_english_a_registered_row_has_english_placeholders_and_is_never_given(tmp_path):
    with Memory.open(home=tmp_path / "home", language="en") as memory:
        memory.remember(TOKENS)
        started = memory.context.start_session(
            {"sessionId": "one", "project": "demo-app", "cwd": "/home/dev/demo-app"}
        )
        (row,) = memory.board.rows()
        assert (row.topic, row.summary) == ("Untitled", "Registered at sessionStart; no topic yet.")
        assert started.board.ok
        memory.index.index_now(vectors=False)
        for query in (None, "Untitled registered sessionStart"):
            packed = memory.context.context(project="demo-app", query=query)
            assert "Untitled" not in packed.text, query
    assert not _CHINESE.search(
        (tmp_path / "home" / "vault" / "memory" / "index.md")
        .read_text()
        .split("| Session ID", 1)[1]
    )
