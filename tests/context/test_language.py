"""MEMVAULT_LANGUAGE: what agents and people read, in zh-Hant, zh-Hans or en; without it,
the language of the user's locale."""

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
    assert language.DEFAULT == "en"


def _settings_under(monkeypatch, **locale: str) -> Settings:
    for name in ("MEMVAULT_LANGUAGE", *language.LOCALE_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    for name, value in locale.items():
        monkeypatch.setenv(name, value)
    return Settings()


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ({"LANG": "zh_TW.UTF-8"}, "zh-Hant"),
        ({"LANG": "zh_HK.UTF-8"}, "zh-Hant"),
        ({"LANG": "zh_TW.Big5"}, "zh-Hant"),
        ({"LANG": "zh_CN.UTF-8"}, "zh-Hans"),
        ({"LANG": "zh_SG.GB2312"}, "zh-Hans"),
        ({"LANG": "zh_Hant_HK.UTF-8"}, "zh-Hant"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "fr_FR.UTF-8"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "POSIX"}, "en"),
        ({}, "en"),
        # LC_ALL wins over LC_MESSAGES, which wins over LANG, as POSIX reads them.
        ({"LC_ALL": "zh_CN.UTF-8", "LC_MESSAGES": "en_US", "LANG": "zh_TW"}, "zh-Hans"),
        ({"LC_MESSAGES": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}, "zh-Hant"),
        ({"LC_ALL": "", "LANG": "zh_HK.UTF-8"}, "zh-Hant"),
    ],
)
def test_without_the_setting_the_locale_chooses(locale, expected, monkeypatch):
    assert _settings_under(monkeypatch, **locale).language == expected
    assert language.from_locale(locale) == expected


def test_the_setting_wins_over_the_locale(monkeypatch):
    settings = _settings_under(monkeypatch, LANG="zh_TW.UTF-8", MEMVAULT_LANGUAGE="en")
    assert settings.language == "en"


def test_an_english_locale_gets_english_rules_report_line_and_placeholders(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MEMVAULT_LANGUAGE", *language.LOCALE_VARIABLES)
    }
    result = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "install", "claude-code", "--print-rules"],
        env={**env, "MEMVAULT_HOME": str(tmp_path), "LANG": "en_US.UTF-8"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == rules.render("en")


def test_each_chinese_script_keeps_the_strings_of_its_script():
    hant, hans = language.strings("zh-Hant"), language.strings("zh-Hans")
    assert hant.report.format(n=0, listed="x") == "📖 agent memory：讀取 0 個碎片 → x"
    assert hans.report.format(n=0, listed="x") == "📖 agent memory：读取 0 个碎片 → x"
    assert (hant.unset_topic, hans.unset_topic) == ("未設定", "未设定")
    assert "📋 agent memory：本次是否有需寫入碎片？[有/無]" in rules.render("zh-Hant")
    assert "📋 agent memory：本次是否有需写入碎片？[有/无]" in rules.render("zh-Hans")


def test_the_default_in_the_suite_is_traditional(memory):
    line = memory.context.context(project="empty").text
    assert line == "📖 agent memory：讀取 0 個碎片 → nothing relevant yet"


def test_in_english_the_block_and_its_report_line_are_english(tmp_path):
    with Memory.open(home=tmp_path / "home", language="en") as memory:
        memory.remember(TOKENS)
        found = memory.context.context(
            project="demo-app", query="how long is the access token valid"
        )
        nothing = memory.context.context(project="demo-app", query="kubernetes helm chart upgrade")
    assert found.text.startswith("📖 agent memory: read 1 fragments → login tokens: ")
    assert nothing.text == "📖 agent memory: read 0 fragments → no relevant fragments"
    assert not _CHINESE.search(found.text + nothing.text)


def test_english_rules_hold_no_chinese_but_the_phrases_a_user_may_say():
    text = rules.render("en")
    prose = [line for line in text.splitlines() if not line.startswith("| ")]
    assert not [line for line in prose if _CHINESE.search(line)]
    assert "`📋 agent memory: anything to write as a fragment this time? [yes/no]`" in text
    for operation in rules.OPERATIONS:
        for phrase in rules.OPERATIONS[operation].said("en"):
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
