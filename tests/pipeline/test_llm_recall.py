"""With an LLM: what memory tools returned is not sent to be learned again, and a recalled
or degenerate fragment from the model is not written."""

from __future__ import annotations

import pytest

from tests.llm.conftest import require_sdk
from tests.llm_server import LLMServer
from tests.pipeline.test_llm_pipeline import Script, asked, open_memory, user_text
from tests.pipeline.test_service import step, work


@pytest.fixture
def server():
    require_sdk("openai")
    with LLMServer() as running:
        running.respond = Script()
        yield running


@pytest.fixture
def memory(tmp_path, server):
    with open_memory(tmp_path, server) as opened:
        yield opened


def fragment(summary: str) -> dict:
    return {"kind": "decision", "summary": summary, "facts": ["login: PKCE"], "events": ["e1"]}


@pytest.mark.parametrize(
    "summary",
    [
        "Decision: use).",
        "use)",
        "决定：用）",
        "We decided earlier to use PKCE for the login flow",
        "上次決定登入流程改用 PKCE",
        "結論：是的。",
    ],
)
def test_a_recalled_or_degenerate_fragment_from_the_model_is_not_written(memory, server, summary):
    server.respond.fragments = {"fragments": [fragment(summary)]}
    memory.observe_many(work("s1"))
    assert memory.pipeline.extract_session("s1") == []
    assert memory.reads.session("s1").extracted.seq is not None


def test_a_real_fragment_from_the_model_is_still_written(memory, server):
    server.respond.fragments = {"fragments": [fragment("Use PKCE for the login flow")]}
    memory.observe_many(work("s1"))
    assert len(memory.pipeline.extract_session("s1")) == 1


def test_memory_tool_results_and_quotes_are_not_sent_to_be_learned(memory, server):
    events = work("s1")
    events.insert(
        1,
        step(
            "s1",
            10,
            "post_tool_use",
            {
                "tool_name": "mcp__memvault__memory_search",
                "tool_input": {"query": "hashing"},
                "tool_output": "decision: hash passwords with argon2-from-memory",
            },
        ),
    )
    events.append(
        step(
            "s1",
            11,
            "assistant_response",
            {"assistantResponse": "> Decision: keep quoted-scrypt\n\nThe tests pass now."},
        )
    )
    memory.observe_many(events)
    memory.pipeline.extract_session("s1")
    sent = user_text(asked(server, "fragments")[0])
    assert "argon2-from-memory" not in sent and "quoted-scrypt" not in sent
    assert "pytest tests/test_login.py" in sent and "The tests pass now." in sent
