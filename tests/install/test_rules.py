"""The agent rules: the protocol they state and the trigger phrases they name."""

from __future__ import annotations

import re

import pytest

from memvault import language, triggers
from memvault.install import rules

OPERATIONS = sorted({operation for operation, _ in triggers._PHRASES})


def test_the_rules_cover_exactly_the_operations_triggers_recognise():
    assert sorted(rules.OPERATIONS) == OPERATIONS


@pytest.mark.parametrize("operation", OPERATIONS)
def test_every_phrase_the_rules_name_is_recognised_as_its_operation(operation):
    session_id = rules.SESSION_ID_EXAMPLE
    for phrase in rules.phrases(operation, session_id):
        found = triggers.recognise(phrase)
        assert found is not None, phrase
        assert found.operation == operation, phrase
        if "<id>" in " ".join(rules.OPERATIONS[operation].english):
            assert found.session_id == session_id, phrase


def test_every_trigger_pattern_has_a_phrase_in_the_rules():
    named = [p for op in rules.OPERATIONS for p in rules.phrases(op)]
    for operation, pattern in triggers._COMPILED:
        assert any(pattern.search(p) for p in named), f"{operation}: {pattern.pattern}"


@pytest.mark.parametrize("value", language.LANGUAGES)
def test_the_text_names_every_phrase_and_tool(value):
    text = rules.render(value)
    for operation, found in rules.OPERATIONS.items():
        for phrase in found.said(value):
            assert f"`{phrase}`" in text
        assert f"`{rules.TOOLS[operation]}`" in text
    for layer in ("recall", "search", "get", "project", "save"):
        assert f"`{rules.TOOLS[layer]}`" in text


_CJK = re.compile("[\u3400-\u9fff]")


def test_every_chinese_passage_of_the_rules_is_written_in_traditional_too():
    left = rules._TEXT
    for simplified in sorted(rules.TRADITIONAL, key=len, reverse=True):
        left = left.replace(simplified, "")
    assert not _CJK.findall(left)


def test_the_two_scripts_differ_character_for_character_and_never_mix():
    hans, hant = rules.render("zh-Hans"), rules.render("zh-Hant")
    assert len(hans) == len(hant) and hans != hant
    changed = [(a, b) for a, b in zip(hans, hant, strict=True) if a != b]
    assert all(_CJK.match(a) and _CJK.match(b) for a, b in changed)
    simplified, traditional = {a for a, _ in changed}, {b for _, b in changed}
    assert not simplified & set(hant), sorted(simplified & set(hant))
    assert not traditional & set(hans), sorted(traditional & set(hans))
    # The phrases of each script's rules are that script's, and every one is understood.
    for operation, found in rules.OPERATIONS.items():
        assert len(found.traditional) == len(found.simplified)
        for a, b in zip(found.traditional, found.simplified, strict=True):
            assert len(a) == len(b) and not set(a) & simplified and not set(b) & traditional
            for phrase in (a, b):
                said = phrase.replace("<id>", rules.SESSION_ID_EXAMPLE)
                assert triggers.recognise(said).operation == operation, phrase


def test_the_text_states_the_read_and_write_protocol():
    text = rules.render("zh-Hans")
    assert "📖 agent memory：读取 N 个碎片 → " in text
    assert "📋 agent memory：本次是否有需写入碎片？[有/无]" in text
    assert "Every user message starts a task" in text and "任何用户消息" in text
    assert "任何用戶消息" in rules.render("zh-Hant")
    assert text.index("L0") < text.index("L1") < text.index("L2")
    for forbidden in ("`type`", "`related_fragments`", "`[[wikilinks]]`"):
        assert forbidden in text
    assert "`key: value`" in text
    assert "Your Memory Session ID is: <id>" in text


@pytest.mark.parametrize("value", ["zh-Hant", "zh-Hans"])
def test_the_text_is_bilingual_section_by_section(value):
    sections = rules.render(value).split("\n## ")[1:]
    assert len(sections) == 3
    for section in sections:
        heading = section.splitlines()[0]
        assert any("\u4e00" <= ch <= "\u9fff" for ch in heading), heading
        assert any(ch.isascii() and ch.isalpha() for ch in heading), heading
