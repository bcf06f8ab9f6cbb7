"""Completions from an OpenAI-compatible chat API: OpenAI, Ollama, LM Studio, vLLM, OpenRouter.

Uses the official `openai` SDK (the `openai` extra) with its own retries switched off:
retries, backoff and the circuit breaker are memvault's, the same for every provider.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from memvault.llm.provider import LLMError
from memvault.llm.transport import AttemptFailed, display_url, import_sdk, sdk_failure

DEFAULT_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
OPENAI_HOST = "api.openai.com"
# Local servers need no key, but the SDK refuses to build a client without one; the
# Authorization header is then left out of every request, so this value is never sent.
_NO_KEY = "no-key"


class OpenAIChat:
    """`POST {url}/chat/completions` with a system and a user message."""

    def __init__(
        self, url: str | None, model: str | None, api_key: str | None, *, timeout: float
    ) -> None:
        self.base_url = (url or DEFAULT_URL).rstrip("/")
        official = urlsplit(self.base_url).hostname == OPENAI_HOST
        where = display_url(self.base_url)
        if model is None and not official:
            raise LLMError(
                f"LLM openai@{where} needs a model name: set MEMVAULT_LLM_MODEL to one this"
                f" server serves (only {OPENAI_HOST} has a default, {DEFAULT_MODEL})"
            )
        if api_key is None and official:
            raise LLMError(
                f"LLM openai@{where} needs an API key: set OPENAI_API_KEY or"
                " MEMVAULT_LLM_API_KEY, or MEMVAULT_LLM_URL for a local server"
            )
        self.model = model or DEFAULT_MODEL
        self._name = f"openai:{self.model}@{where}"
        self._secret = api_key
        self._timeout = timeout
        self._sdk = import_sdk("openai")
        self._client: Any = self._sdk.OpenAI(
            base_url=self.base_url, api_key=api_key or _NO_KEY, timeout=timeout, max_retries=0
        )
        self._headers = {} if api_key else {"Authorization": self._sdk.omit}

    @property
    def name(self) -> str:
        return self._name

    def send(self, system: str, prompt: str, max_tokens: int) -> str:
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                max_tokens=max_tokens,
                extra_headers=self._headers,
            )
        except (self._sdk.APIError, ValueError) as error:
            raise sdk_failure(
                error, self._sdk, secret=self._secret, timeout=self._timeout
            ) from None
        choices = getattr(response, "choices", None)
        if not choices:
            raise AttemptFailed("answered without any choices", retryable=False)
        text = getattr(choices[0].message, "content", None)
        if not isinstance(text, str):
            reason = getattr(choices[0], "finish_reason", None)
            raise AttemptFailed(f"answered without text (finish_reason {reason})", retryable=False)
        return text

    def close(self) -> None:
        self._client.close()
