"""A real OpenAI- and Anthropic-compatible server on loopback, and helpers to call it."""

from __future__ import annotations

import importlib.util
import os

import pytest

from memvault.config import Settings
from memvault.llm import AnthropicMessages, CallPolicy, Gate, GuardedLLM, OpenAIChat
from tests.helpers import IN_CI
from tests.llm_server import LLMServer

# Fast enough for tests, and otherwise what open_llm uses.
FAST = CallPolicy(backoff_seconds=0.002, max_backoff_seconds=0.01, cooldown_seconds=0.2)


def require_sdk(module: str) -> None:
    """Skip without the extra, except in CI, which must install it and run every test."""
    if importlib.util.find_spec(module) is not None:
        return
    message = f"the `{module}` extra is not installed (pip install 'memvault[{module}]')"
    if IN_CI:
        pytest.fail(f"{message}, and CI must run every test")
    pytest.skip(message)


@pytest.fixture
def llm_server():
    with LLMServer() as server:
        yield server


@pytest.fixture
def make_llm():
    """A factory for guarded providers on a loopback URL; every one made is closed after."""
    made: list[GuardedLLM] = []

    def factory(
        url: str,
        *,
        provider: str = "openai",
        model: str = "test-model",
        api_key: str | None = None,
        timeout: float = 5.0,
        gate: Gate | None = None,
        max_input_tokens: int = 6000,
        policy: CallPolicy = FAST,
    ) -> GuardedLLM:
        require_sdk(provider)
        transport = (OpenAIChat if provider == "openai" else AnthropicMessages)(
            url, model, api_key, timeout=timeout
        )
        llm = GuardedLLM(
            transport, gate=gate or Gate(2), max_input_tokens=max_input_tokens, policy=policy
        )
        made.append(llm)
        return llm

    yield factory
    for llm in made:
        llm.close()


@pytest.fixture
def settings(tmp_path, monkeypatch):
    """Settings built from keywords alone, whatever this machine's environment says."""
    for name in list(os.environ):
        if name.startswith(("MEMVAULT_", "OPENAI_", "ANTHROPIC_", "AGENTMEMORY_")):
            monkeypatch.delenv(name)

    def build(**values) -> Settings:
        return Settings(home=tmp_path / "home", **values)

    return build
