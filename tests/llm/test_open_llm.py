"""Choosing a provider from settings: none, auto, openai, anthropic."""

from __future__ import annotations

import logging
import sys

import pytest

from memvault.llm import GuardedLLM, LLMError, open_llm
from memvault.llm.budget import estimate_tokens
from tests.llm.conftest import require_sdk


@pytest.fixture
def opened():
    """Calls open_llm and closes whatever provider it returns after the test."""
    made: list[GuardedLLM] = []

    def call(settings) -> GuardedLLM | None:
        llm = open_llm(settings)
        if llm is not None:
            made.append(llm)
        return llm

    yield call
    for llm in made:
        llm.close()


@pytest.fixture
def without(monkeypatch):
    """Make an SDK unimportable, as on an install without its extra."""

    def hide(module: str) -> None:
        monkeypatch.setitem(sys.modules, module, None)

    return hide


def test_none_means_no_llm_even_with_a_key(settings, opened):
    assert opened(settings(llm="none", llm_api_key="sk-test")) is None


def test_auto_without_a_key_or_url_means_no_llm(settings, opened):
    assert opened(settings(llm="auto")) is None


def test_auto_with_a_key_means_openai_with_its_default_model(settings, opened):
    require_sdk("openai")
    llm = opened(settings(llm="auto", llm_api_key="sk-test"))

    assert llm.name == "openai:gpt-4o-mini@https://api.openai.com/v1"


def test_auto_with_a_url_means_openai_at_that_url(settings, opened, llm_server):
    require_sdk("openai")
    llm = opened(settings(llm="auto", llm_url=llm_server.base_url, llm_model="llama3.1"))

    assert llm.name == f"openai:llama3.1@{llm_server.base_url}"
    assert llm.complete("s", "p") == llm_server.text
    assert "authorization" not in llm_server.requests[0].headers


def test_auto_with_a_url_but_no_model_is_an_error_naming_the_setting(settings, opened):
    require_sdk("openai")
    with pytest.raises(LLMError, match=r"openai@http://127\.0\.0\.1:11434/v1.*MEMVAULT_LLM_MODEL"):
        opened(settings(llm="auto", llm_url="http://127.0.0.1:11434/v1"))


def test_auto_without_the_openai_extra_means_no_llm(settings, opened, without):
    without("openai")

    assert opened(settings(llm="auto", llm_api_key="sk-test")) is None


def test_auto_does_not_send_an_anthropic_key_to_openai(settings, opened, caplog):
    require_sdk("openai")
    caplog.set_level(logging.WARNING, logger="memvault.llm")

    assert opened(settings(llm="auto", llm_api_key="sk-ant-api03-test")) is None
    assert "MEMVAULT_LLM=anthropic" in caplog.text
    assert "sk-ant-api03-test" not in caplog.text


def test_openai_without_its_extra_names_the_install_command(settings, opened, without):
    without("openai")

    with pytest.raises(LLMError, match=r"pip install 'memvault\[openai\]'"):
        opened(settings(llm="openai", llm_api_key="sk-test"))


def test_openai_at_its_own_api_needs_a_key(settings, opened):
    with pytest.raises(LLMError, match="needs an API key"):
        opened(settings(llm="openai"))


def test_a_url_with_credentials_keeps_them_out_of_the_name(settings, opened, llm_server):
    require_sdk("openai")
    url = llm_server.base_url.replace("http://", "http://user:hunter2@")

    llm = opened(settings(llm="openai", llm_url=url, llm_model="m"))

    assert "hunter2" not in llm.name
    assert llm.name == f"openai:m@{llm_server.base_url}"


def test_anthropic_needs_a_model(settings, opened):
    with pytest.raises(LLMError, match=r"anthropic.*MEMVAULT_LLM_MODEL"):
        opened(settings(llm="anthropic", llm_api_key="sk-ant-test"))


def test_anthropic_at_its_own_api_needs_a_key(settings, opened):
    with pytest.raises(LLMError, match=r"anthropic.*MEMVAULT_LLM_API_KEY"):
        opened(settings(llm="anthropic", llm_model="claude-test"))


def test_anthropic_without_its_extra_names_the_install_command(settings, opened, without):
    without("anthropic")

    with pytest.raises(LLMError, match=r"pip install 'memvault\[anthropic\]'"):
        opened(settings(llm="anthropic", llm_model="claude-test", llm_api_key="sk-ant-test"))


def test_anthropic_is_named_by_its_model(settings, opened):
    require_sdk("anthropic")
    llm = opened(settings(llm="anthropic", llm_model="claude-test", llm_api_key="sk-ant-test"))

    assert llm.name == "anthropic:claude-test"


def test_settings_reach_the_provider(settings, opened, llm_server):
    require_sdk("openai")
    llm = opened(
        settings(
            llm="openai",
            llm_url=llm_server.base_url,
            llm_model="m",
            llm_api_key="sk-from-settings",
            llm_max_input_tokens=500,
        )
    )

    llm.complete("s", "word " * 5000)

    request = llm_server.requests[0]
    assert request.headers["authorization"] == "Bearer sk-from-settings"
    assert estimate_tokens(request.body["messages"][-1]["content"]) <= 500


def test_anthropic_at_a_configured_url_speaks_the_messages_api(settings, opened, llm_server):
    require_sdk("anthropic")
    llm = opened(settings(llm="anthropic", llm_url=llm_server.root_url, llm_model="claude-test"))

    assert llm.complete("s", "p") == llm_server.text
    assert llm_server.requests[0].path == "/v1/messages"
