"""What a session's memory block leaves out: the session itself, bookkeeping, placeholder
board rows, raw tool payloads."""

from __future__ import annotations

from tests.context.conftest import start
from tests.helpers import envelope


def _prompt(memory, session: str, n: int, text: str) -> None:
    memory.observe(envelope(session, n, hookType="prompt_submit", data={"prompt": text}))


def _npm_test(memory, session: str, n: int) -> None:
    memory.observe(
        envelope(
            session,
            n,
            data={
                "tool_name": "Bash",
                "tool_input": {"command": "npm test -- auth refresh token"},
                "tool_output": {"stdout": "FAIL refresh token rotation"},
            },
        )
    )


def test_a_prompt_block_leaves_out_the_session_itself(auth_memory):
    start(auth_memory, "one")
    _prompt(auth_memory, "one", 1, "why does the refresh token rotation fail")
    _npm_test(auth_memory, "one", 2)
    _prompt(auth_memory, "one", 3, "the refresh token rotation test fails again")
    packed = auth_memory.context.context(
        project="demo-app",
        query="the refresh token rotation test fails again",
        session_id="one",
        answering="UserPromptSubmit",
    )
    own = {o.id for o in auth_memory.reads.observations("one")}
    assert not own & {b["id"] for b in packed.blocks}
    assert "Session started" not in packed.text
    assert "fails again" not in packed.text
    row = auth_memory.reads.session("one").board_session_id
    assert row and row not in packed.text


def test_another_sessions_tool_call_is_its_title_never_its_payload(auth_memory):
    _npm_test(auth_memory, "one", 1)
    auth_memory.observe(envelope("one", 2, hookType="stop", data={}))
    auth_memory.observe(envelope("one", 3, hookType="session_end", data={"reason": "exit"}))
    start(auth_memory, "two")
    packed = auth_memory.context.context(
        project="demo-app", query="refresh token rotation", session_id="two"
    )
    assert "- [2026-11-30] Bash: npm test -- auth refresh token" in packed.text
    assert '{"command"' not in packed.text and "stdout" not in packed.text
    assert "Turn ended" not in packed.text and "Session ended" not in packed.text


def test_placeholder_board_rows_are_never_given(auth_memory):
    start(auth_memory, "one")  # an idle row, "未設定" with the registration's summary
    auth_memory.index.index_now(vectors=False)
    assert auth_memory.store.list_documents("summary")  # kept, with no words to match
    assert not auth_memory.index.searcher.search("sessionStart", kinds=["summary"])
    start(auth_memory, "two")
    for query in (None, "sessionStart 未設定 registration", "refresh token"):
        packed = auth_memory.context.context(project="demo-app", query=query)
        assert "未設定" not in packed.text and "sessionStart" not in packed.text, query
        assert not [b for b in packed.blocks if b["kind"] == "summary"], query
