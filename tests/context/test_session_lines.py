"""A prompt block tells of the sessions a request is about: each by one line (what it was
asked, the files it touched), with the decision it made on what the request names."""

from __future__ import annotations

import pytest

from memvault import Memory


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home") as opened:
        yield opened


def event(session: str, n: int, hook: str, data: dict) -> dict:
    return {
        "hookType": hook,
        "sessionId": session,
        "eventId": f"{session}:{n}",
        "project": "blast",
        "cwd": "/src/blast",
        "timestamp": f"2026-11-{20 + n // 60:02d}T10:00:{n % 60:02d}.000Z",
        "data": data,
    }


def edit(session: str, n: int, path: str) -> dict:
    return event(
        session,
        n,
        "post_tool_use",
        {"tool_name": "Edit", "tool_input": {"file_path": path}, "tool_output": "ok"},
    )


def history(memory: Memory) -> None:
    memory.capture.observe_many(
        [
            event("args", 0, "prompt_submit", {"prompt": "parse the command line arguments"}),
            event(
                "args",
                1,
                "assistant_response",
                {
                    "assistantResponse": "Let's use the CommandLineParser library instead of "
                    "parsing the arguments by hand. I added it to the project."
                },
            ),
            edit("args", 2, "/src/blast/BlastMerge.ConsoleApp/Program.cs"),
            event("docs", 0, "prompt_submit", {"prompt": "write the changelog for the release"}),
            event(
                "docs",
                1,
                "assistant_response",
                {"assistantResponse": "The changelog mentions the verbose logging option."},
            ),
            edit("docs", 2, "/src/blast/CHANGELOG.md"),
        ]
    )
    memory.index.index_now()


def test_a_session_line_quotes_the_decision_on_what_the_request_names(memory):
    history(memory)
    packed = memory.context.context(
        project="blast", query="add a --verbose option to the CommandLineParser options"
    )
    sessions = [b for b in packed.blocks if b["kind"] == "session"]
    assert [b["id"] for b in sessions] == ["args"]
    (line,) = [b["text"] for b in sessions]
    assert "parse the command line arguments" in line
    assert "Program.cs" in line
    assert "decided: Let's use the CommandLineParser library" in line


def test_a_board_rows_topic_that_its_summary_opens_with_is_said_once():
    """A row whose topic is its summary's opening, cut ("Method has 8 parameters, which is
    greater than the 7…"), is told by its summary alone; another topic stays before it."""
    from memvault.domain import Document
    from memvault.search.context import told

    def row(title: str, summary: str) -> Document:
        return Document(
            1,
            "summary",
            "row",
            "blast",
            "row",
            title,
            summary,
            "",
            0.5,
            "2026-11-20",
            None,
            [],
            False,
            {},
            0,
            None,
        )

    said = "Method has 8 parameters, which is greater than the 7 authorized. Result: Grouped."
    assert told(row("Method has 8 parameters, which is greater than the 7…", said)) == f"- {said}"
    assert told(row("Fix this bug", said)) == f"- Fix this bug: {said}"


def test_the_floor_reads_an_events_body_not_the_line_it_is_told_by():
    """An event's line is made of its whole text, code left out, so it reaches words its
    body's start does not hold: the floor reads what it was measured on, the body's start."""
    from memvault.domain import Document
    from memvault.search.context import FLOOR_CHARS, matched

    body = "Let me fix it:\n```diff\n" + "- old\n+ new\n" * 200 + "```\nThe pool is closed."
    line = "Let me fix it: … The pool is closed."
    event = Document(
        1,
        "observation",
        "obs_1",
        "blast",
        "s",
        "Response",
        line,
        body,
        0.5,
        "2026-11-20",
        None,
        [],
        False,
        {},
        0,
        None,
    )
    assert "pool" not in body[:FLOOR_CHARS]
    assert matched({"pool": 1.0}, event) == 0.0
