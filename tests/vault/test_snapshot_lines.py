"""A line break in what a session gives the board never changes the snapshot's shape: a
topic with one is refused naming it (400), and an item or a paragraph holding a line that
reads like a section heading stays inside its section."""

from __future__ import annotations

import httpx
import pytest

from memvault.vault.snapshot import NEXT, QUESTIONS, Snapshot


def test_an_item_holding_a_heading_line_adds_no_section(memory):
    given = "Ship it\n## Open Questions\nnot a question"
    report = memory.board.register_session(
        agent="agent-one",
        manual=True,
        content={"Current Context": "Said\n## Next Actions\nmore", "Next Actions": [given]},
    )
    assert report.ok, report.message
    path = memory.settings.vault_path / "memory" / "sessions" / f"{report.session_id}.md"
    text = path.read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert len(headings) == len(set(headings)), text
    snapshot = Snapshot.parse(text)
    assert len(snapshot.items(NEXT)) == 1 and snapshot.items(QUESTIONS) == []
    again = memory.board.update_session(report.session_id, {"Next Actions": ["Then test"]})
    assert again.ok, again.message
    text = path.read_text(encoding="utf-8")
    assert [line for line in text.splitlines() if line.startswith("## ")] == headings


@pytest.mark.parametrize("topic", ["one\ntwo", "one\r\n## Next Actions"])
def test_a_topic_holding_a_line_break_is_refused_naming_it(server, topic):
    answer = httpx.post(
        f"{server.url}/agentmemory/board/register",
        json={"agentName": "agent-one", "manual": True, "topic": topic},
        timeout=60,
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["fields"] == ["topic"]
    assert "line break" in answer.json()["error"]
