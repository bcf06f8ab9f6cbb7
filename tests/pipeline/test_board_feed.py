"""What the pipeline writes on a session's board row: Keywords replace registration's
placeholder like a placeholder Topic is replaced, and what a person wrote stays."""

from __future__ import annotations

import pytest

from memvault.vault.board import is_placeholder_keywords


def envelope(session: str, n: int, hook: str, data: dict) -> dict:
    return {
        "hookType": hook,
        "sessionId": session,
        "agentId": "claude-code",
        "project": "demo-app",
        "cwd": "/code/demo-app",
        "timestamp": f"2026-11-30T09:00:{n:02d}.000Z",
        "eventId": f"{session}-{n}",
        "data": data,
    }


def work(session: str, start: int = 0, prompt: str = "Fix the failing login test") -> list:
    return [
        envelope(session, start, "prompt_submit", {"prompt": prompt}),
        envelope(
            session,
            start + 1,
            "post_tool_use",
            {
                "tool_name": "Edit",
                "tool_input": {"file_path": "/code/demo-app/src/login.py"},
                "tool_output": "ok",
            },
        ),
        envelope(
            session,
            start + 2,
            "assistant_response",
            {"assistantResponse": "The login test passes now: the token check was inverted."},
        ),
    ]


def registered(memory, session: str) -> str:
    started = memory.context.start_session(
        {"sessionId": session, "agentId": "claude-code", "project": "demo-app", "cwd": "/c"}
    )
    return started.board.session_id


def edit_cell(memory, old: str, new: str) -> None:
    path = memory.board.index_path
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_the_pipeline_replaces_the_registration_keywords(memory):
    board_id = registered(memory, "chat")
    assert memory.board.row_in_file(board_id).keywords == "sessionStart, claude-code-agent"
    memory.observe_many(work("chat"))
    memory.pipeline.summarize_session("chat")
    row = memory.board.row_in_file(board_id)
    assert row.status == "active"
    assert "sessionStart" not in row.keywords
    assert "login" in row.keywords.lower()


def test_hand_written_keywords_stay(memory):
    board_id = registered(memory, "chat")
    edit_cell(memory, "| sessionStart, claude-code-agent |", "| auth, tokens |")
    memory.observe_many(work("chat"))
    memory.pipeline.summarize_session("chat")
    assert memory.board.row_in_file(board_id).keywords == "auth, tokens"


def test_a_hand_edited_summary_stays_through_the_pipeline(memory):
    board_id = registered(memory, "chat")
    memory.observe_many(work("chat"))
    memory.pipeline.summarize_session("chat")
    row = memory.board.row_in_file(board_id)
    edit_cell(memory, f"| {row.summary} |", "| Login fix, see the PR. |")
    memory.observe_many(work("chat", start=10, prompt="Now add a test for the logout flow"))
    memory.pipeline.summarize_session("chat")
    row = memory.board.row_in_file(board_id)
    assert row.summary == "Login fix, see the PR."
    assert "logout" in memory.board.snapshot_text(board_id)


def test_the_pipeline_summary_follows_while_it_is_memvaults(memory):
    board_id = registered(memory, "chat")
    memory.observe_many(work("chat"))
    memory.pipeline.summarize_session("chat")
    memory.observe_many(work("chat", start=10, prompt="Now add a test for the logout flow"))
    memory.pipeline.summarize_session("chat")
    assert "logout" in memory.board.row_in_file(board_id).summary


@pytest.mark.parametrize(
    "cell",
    [
        "sessionStart, claude-code-agent",
        "sessionStart, cursor-agent",
        "manual-registration, cursor-agent, session-snapshot",
        "sessionStart",
        "",
        " ",
    ],
)
def test_registration_keywords_are_placeholders(cell):
    assert is_placeholder_keywords(cell)


@pytest.mark.parametrize(
    "cell", ["auth, oauth", "sessionStart, auth", "登入, PKCE", "manual-registration, billing"]
)
def test_written_keywords_are_not_placeholders(cell):
    assert not is_placeholder_keywords(cell)
