"""The Anthropic provider against a real server speaking the Messages API on loopback."""

from __future__ import annotations

import pytest

from memvault.llm import LLMError


@pytest.fixture
def claude(llm_server, make_llm):
    return make_llm(
        llm_server.root_url, provider="anthropic", model="claude-test", api_key="sk-ant-test"
    )


def test_the_completion_text_comes_back(llm_server, claude):
    llm_server.text = "The session fixed the login bug."

    assert claude.complete("Summarize.", "what happened") == "The session fixed the login bug."


def test_the_model_system_prompt_and_user_message_are_sent(llm_server, claude):
    claude.complete("You summarize sessions.", "what happened", max_tokens=300)

    (request,) = llm_server.requests
    assert request.path == "/v1/messages"
    assert request.body["model"] == "claude-test"
    assert request.body["max_tokens"] == 300
    assert request.body["system"] == "You summarize sessions."
    assert request.body["messages"] == [{"role": "user", "content": "what happened"}]
    assert "sk-ant-test" in request.headers.get("x-api-key", "") + request.headers.get(
        "authorization", ""
    )


def test_the_name_includes_a_url_that_is_not_anthropics_own(llm_server, claude):
    assert claude.name == f"anthropic:claude-test@{llm_server.root_url}"


def test_an_overloaded_server_is_retried(llm_server, claude):
    llm_server.answers.append(529)

    assert claude.complete("s", "p") == llm_server.text
    assert len(llm_server.requests) == 2


def test_a_bad_request_is_not_retried(llm_server, claude):
    llm_server.answers.append(400)

    with pytest.raises(LLMError, match=r"anthropic:claude-test@.*HTTP 400"):
        claude.complete("s", "p")
    assert len(llm_server.requests) == 1


def test_an_answer_without_text_is_an_llm_error(llm_server, claude):
    llm_server.answers.append("no-text")

    with pytest.raises(LLMError, match="without text"):
        claude.complete("s", "p")


def test_without_a_key_a_gateway_gets_no_authorization(llm_server, make_llm):
    llm = make_llm(llm_server.root_url, provider="anthropic", model="claude-test")

    llm.complete("s", "p")

    headers = llm_server.requests[0].headers
    assert "authorization" not in headers
    assert "x-api-key" not in headers
