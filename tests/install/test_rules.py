"""The agent rules: the protocol they state and the trigger phrases they name."""

from __future__ import annotations

import pytest

from memvault import triggers
from memvault.config import Settings
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
        if "<id>" in " ".join(rules.OPERATIONS[operation][2]):
            assert found.session_id == session_id, phrase


def test_every_trigger_pattern_has_a_phrase_in_the_rules():
    named = [p for op in rules.OPERATIONS for p in rules.phrases(op)]
    for operation, pattern in triggers._COMPILED:
        assert any(pattern.search(p) for p in named), f"{operation}: {pattern.pattern}"


def test_the_text_names_every_phrase_and_tool():
    text = rules.render(Settings().language)
    for operation, (_, _, said) in rules.OPERATIONS.items():
        for phrase in said:
            assert f"`{phrase}`" in text
        assert f"`{rules.TOOLS[operation]}`" in text
    for layer in ("recall", "search", "get", "project", "save"):
        assert f"`{rules.TOOLS[layer]}`" in text


def test_the_text_states_the_read_and_write_protocol():
    text = rules.render(Settings().language)
    assert "📖 agent memory：读取 N 个碎片 → " in text
    assert "📋 agent memory：本次是否有需写入碎片？[有/无]" in text
    assert "Every user message starts a task" in text and "任何用户消息" in text
    assert text.index("L0") < text.index("L1") < text.index("L2")
    for forbidden in ("`type`", "`related_fragments`", "`[[wikilinks]]`"):
        assert forbidden in text
    assert "`key: value`" in text
    assert "Your Memory Session ID is: <id>" in text


def test_the_text_is_bilingual_section_by_section():
    sections = rules.render(Settings().language).split("\n## ")[1:]
    assert len(sections) == 3
    for section in sections:
        heading = section.splitlines()[0]
        assert any("\u4e00" <= ch <= "\u9fff" for ch in heading), heading
        assert any(ch.isascii() and ch.isalpha() for ch in heading), heading
