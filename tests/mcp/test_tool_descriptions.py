"""What the tools tell the model: trigger phrases that really trigger, the read/write
protocol, and input schemas whose every argument is described and bounded."""

from __future__ import annotations

import re

import anyio
import pytest

from memvault.mcp_server import build_server
from memvault.triggers import recognise

BOARD_TOOLS = {
    "memory_session_register": "register",
    "memory_session_update": "update",
    "memory_session_continue": "continue",
    "memory_session_release": "release",
    "memory_session_archive": "archive",
    "memory_organize": "organize",
}
SAMPLE_ID = "2026-11-30-1015-cursor-main-agent"


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    from memvault import Memory

    with Memory.open(home=tmp_path_factory.mktemp("descriptions")) as memory:
        listed = anyio.run(build_server(memory).list_tools)
    return {tool.name: tool for tool in listed}


def _phrases(description: str) -> list[str]:
    """The trigger phrases a description lists: `…` and "…" after "Trigger phrases:"."""
    listed = re.search(r"Trigger phrases: (.+?)\.(?:\s|$)", description, re.DOTALL)
    assert listed, f"no trigger phrases in: {description}"
    quoted = re.findall(r"`([^`]+)`|\"([^\"]+)\"", listed.group(1))
    return [" ".join((a or b).split()) for a, b in quoted]


@pytest.mark.parametrize(("name", "operation"), BOARD_TOOLS.items())
def test_each_trigger_phrase_named_is_recognised_as_that_tools_operation(tools, name, operation):
    phrases = _phrases(tools[name].description)
    assert len(phrases) >= 2
    assert any(re.search(r"[\u4e00-\u9fff]", p) for p in phrases)  # Chinese
    assert any(p.isascii() for p in phrases)  # and English
    for phrase in phrases:
        found = recognise(phrase.replace("<id>", SAMPLE_ID))
        assert found is not None, phrase
        assert found.operation == operation, phrase


def test_the_phrases_the_spec_names_are_there(tools):
    assert "`整理 memory`" in tools["memory_organize"].description
    assert '"organize memory"' in tools["memory_organize"].description
    assert "`更新 memory session`" in tools["memory_session_update"].description
    assert '"update memory session"' in tools["memory_session_update"].description


def test_read_at_start_and_write_at_end_are_described(tools):
    recall = tools["memory_recall"].description
    assert "before every task" in recall
    assert "📖 agent memory：讀取 N 個碎片 → …" in recall  # the suite's language, zh-Hant
    save = tools["memory_save"].description
    assert "in the same turn" in save
    assert "📋 agent memory：本次是否有需寫入碎片？[有/無]" in save
    for forbidden in ("`type`", "`related_fragments`", "[[wikilinks]]"):
        assert forbidden in save


def test_the_report_lines_follow_the_servers_language(tmp_path):
    from memvault import Memory

    with Memory.open(home=tmp_path / "home", language="en") as memory:
        server = build_server(memory)
        listed = {tool.name: tool for tool in anyio.run(server.list_tools)}
    recall, save = listed["memory_recall"].description, listed["memory_save"].description
    assert "(`📖 agent memory: read N fragments → …`)" in recall
    assert "`📋 agent memory: anything to write as a fragment this time? [yes/no]`" in save
    assert "📋 agent memory: anything to write" in server.instructions
    assert "碎片" not in recall + save + server.instructions


def test_every_argument_is_described_and_unknown_ones_are_refused(tools):
    for tool in tools.values():
        schema = tool.input_schema
        assert schema["additionalProperties"] is False, tool.name
        for name, prop in schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
            if name == "limit":
                assert prop["minimum"] == 1 and prop["maximum"] <= 200, tool.name


def test_reads_are_marked_read_only_and_board_clean_ups_destructive(tools):
    for name in ("memory_search", "memory_get", "memory_project", "memory_recall"):
        assert tools[name].annotations.read_only_hint is True
    for name in ("memory_session_archive", "memory_organize"):
        assert tools[name].annotations.read_only_hint is False
        assert tools[name].annotations.destructive_hint is True
