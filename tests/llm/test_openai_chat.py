"""The OpenAI-compatible provider against a real HTTP server on loopback."""

from __future__ import annotations

import logging
import time

import pytest

from memvault.llm import LLMError
from tests.helpers import free_port


def test_the_completion_text_comes_back(llm_server, make_llm):
    llm_server.text = "The session fixed the login bug."
    llm = make_llm(llm_server.base_url)

    assert llm.complete("Summarize.", "user: fix login\nassistant: done") == (
        "The session fixed the login bug."
    )


def test_the_model_and_the_system_and_user_messages_are_sent(llm_server, make_llm):
    make_llm(llm_server.base_url, model="llama3.1").complete(
        "You summarize sessions.", "what happened", max_tokens=200
    )

    (request,) = llm_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "llama3.1"
    assert request.body["max_tokens"] == 200
    assert request.body["messages"] == [
        {"role": "system", "content": "You summarize sessions."},
        {"role": "user", "content": "what happened"},
    ]


def test_the_key_is_sent_as_a_bearer_token(llm_server, make_llm):
    make_llm(llm_server.base_url, api_key="sk-test-123").complete("s", "p")

    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-test-123"


def test_without_a_key_no_authorization_header_is_sent(llm_server, make_llm):
    make_llm(llm_server.base_url, api_key=None).complete("s", "p")

    assert "authorization" not in llm_server.requests[0].headers


def test_the_name_says_provider_model_and_url(llm_server, make_llm):
    llm = make_llm(llm_server.base_url, model="qwen2.5")

    assert llm.name == f"openai:qwen2.5@{llm_server.base_url}"


def test_a_server_error_is_retried_until_it_answers(llm_server, make_llm):
    llm_server.answers.extend([500, 503])

    assert make_llm(llm_server.base_url).complete("s", "p") == llm_server.text
    assert len(llm_server.requests) == 3


def test_a_rate_limit_is_retried(llm_server, make_llm):
    llm_server.answers.append(429)

    assert make_llm(llm_server.base_url).complete("s", "p") == llm_server.text
    assert len(llm_server.requests) == 2


def test_a_bad_request_is_not_retried_and_the_error_names_the_status(llm_server, make_llm):
    llm_server.answers.append(400)
    llm = make_llm(llm_server.base_url)

    with pytest.raises(LLMError) as raised:
        llm.complete("s", "p")

    assert len(llm_server.requests) == 1
    message = str(raised.value)
    assert "HTTP 400" in message
    assert "scripted failure" in message
    assert llm.name in message


def test_retries_give_up_after_the_last_attempt(llm_server, make_llm):
    llm_server.answers.extend([500, 500, 500, 500])

    with pytest.raises(LLMError, match=r"HTTP 500.*after 3 attempts"):
        make_llm(llm_server.base_url).complete("s", "p")
    assert len(llm_server.requests) == 3


def test_a_slow_server_times_out_as_an_llm_error_without_retries(llm_server, make_llm):
    llm_server.delay = 1.0
    llm = make_llm(llm_server.base_url, timeout=0.2)

    started = time.monotonic()
    with pytest.raises(LLMError, match=r"timed out after 0\.2 s"):
        llm.complete("s", "p")

    assert time.monotonic() - started < 0.9
    assert len(llm_server.requests) == 1


def test_an_unreachable_server_is_retried_then_reported(make_llm):
    url = f"http://127.0.0.1:{free_port()}/v1"

    with pytest.raises(LLMError, match=r"cannot connect.*after 3 attempts"):
        make_llm(url).complete("s", "p")


@pytest.mark.parametrize(
    ("answer", "problem"),
    [("malformed", "malformed response"), ("no-text", "without any choices")],
)
def test_a_response_without_a_completion_is_an_llm_error(llm_server, make_llm, answer, problem):
    llm_server.answers.append(answer)

    with pytest.raises(LLMError, match=problem):
        make_llm(llm_server.base_url).complete("s", "p")
    assert len(llm_server.requests) == 1


def test_the_api_key_never_appears_in_errors_or_logs(llm_server, make_llm, caplog):
    llm_server.answers.append("echo")
    caplog.set_level(logging.DEBUG, logger="memvault.llm")

    with pytest.raises(LLMError) as raised:
        make_llm(llm_server.base_url, api_key="sk-secret-777").complete("s", "p")

    assert "sk-secret-777" in llm_server.requests[0].headers["authorization"]
    assert "Bearer ***" in str(raised.value)
    assert "sk-secret-777" not in str(raised.value)
    assert "sk-secret-777" not in caplog.text


def test_completions_are_logged_at_debug_and_failures_as_warnings(llm_server, make_llm, caplog):
    caplog.set_level(logging.DEBUG, logger="memvault.llm")
    llm = make_llm(llm_server.base_url)
    llm_server.answers.extend([500, "ok", 400])

    llm.complete("s", "p")
    with pytest.raises(LLMError):
        llm.complete("s", "p")

    levels = [(record.levelname, record.getMessage()) for record in caplog.records]
    assert [level for level, _ in levels] == ["WARNING", "DEBUG", "WARNING"]
    assert "retrying" in levels[0][1]
    assert "answered" in levels[1][1]
    assert "HTTP 400" in levels[2][1]
    assert all(llm.name in message for _, message in levels)
