"""LLM providers for background work: summaries, fragment extraction, observation compression.

An OpenAI-compatible API (OpenAI, Ollama, LM Studio, vLLM, OpenRouter) or Anthropic, each an
optional extra. No LLM is ever called on a request path: a search request's translation
(`translate.py`) is made on a thread of its own, and a search waits for it a bounded time at
most. Without an LLM the pipeline stays offline (extractive), so `open_llm` returning None
is a normal answer, not an error.
"""

from __future__ import annotations

import logging
from importlib.util import find_spec

from memvault.config import Settings
from memvault.llm.anthropic_messages import AnthropicMessages
from memvault.llm.gate import Gate, process_gate
from memvault.llm.guarded import CallPolicy, GuardedLLM
from memvault.llm.openai_chat import OpenAIChat
from memvault.llm.provider import LLM, LLMError, LLMUnavailable

__all__ = [
    "LLM",
    "AnthropicMessages",
    "CallPolicy",
    "Gate",
    "GuardedLLM",
    "LLMError",
    "LLMUnavailable",
    "OpenAIChat",
    "open_llm",
    "process_gate",
]

log = logging.getLogger("memvault.llm")
ANTHROPIC_KEY_PREFIX = "sk-ant-"


def open_llm(
    settings: Settings, *, policy: CallPolicy | None = None, timeout: float | None = None
) -> LLM | None:
    """The provider `settings.llm` asks for, behind this process's shared gate; None for none.

    `auto` means the OpenAI-compatible provider when a URL or an API key is configured and the
    `openai` extra is installed, and none otherwise. Naming a provider explicitly without its
    SDK, model or key is an error, not a silent fallback. Open it once and keep it: the
    circuit breaker's memory of failures lives in the returned object. ``policy`` and
    ``timeout`` (seconds per attempt) replace the defaults and ``llm_timeout_seconds`` for
    work that cannot wait long (translating a search request).
    """
    secret = settings.llm_api_key.get_secret_value().strip() if settings.llm_api_key else ""
    key = secret or None
    choice = settings.llm
    if choice == "none":
        return None
    if choice == "auto":
        if settings.llm_url is None and key is None:
            return None
        if find_spec("openai") is None:
            log.info("no LLM: an LLM is configured but the openai extra is not installed")
            return None
        if settings.llm_url is None and key is not None and key.startswith(ANTHROPIC_KEY_PREFIX):
            # An Anthropic key given for auto: sending it to OpenAI would leak it.
            log.warning(
                "no LLM: MEMVAULT_LLM=auto found an Anthropic API key and does not send it to"
                " OpenAI; set MEMVAULT_LLM=anthropic and MEMVAULT_LLM_MODEL to use Claude"
            )
            return None
        choice = "openai"
    provider = OpenAIChat if choice == "openai" else AnthropicMessages
    transport = provider(
        settings.llm_url, settings.llm_model, key, timeout=timeout or settings.llm_timeout_seconds
    )
    return GuardedLLM(
        transport,
        gate=process_gate(settings.llm_concurrency),
        max_input_tokens=settings.llm_max_input_tokens,
        policy=policy,
    )
