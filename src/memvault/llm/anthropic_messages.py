"""Completions from Anthropic's Messages API, through the official `anthropic` SDK.

The SDK is the `anthropic` extra. Its own retries are switched off: retries, backoff and the
circuit breaker are memvault's, the same for every provider.
"""

from __future__ import annotations

from typing import Any

from memvault.llm.provider import LLMError
from memvault.llm.transport import AttemptFailed, display_url, import_sdk, sdk_failure

DEFAULT_URL = "https://api.anthropic.com"
# A gateway may need no key, but the SDK refuses to build a client without one; the
# Authorization header is then left out of every request, so this value is never sent.
_NO_KEY = "no-key"


class AnthropicMessages:
    """`POST {url}/v1/messages` with a system prompt and one user message."""

    def __init__(
        self, url: str | None, model: str | None, api_key: str | None, *, timeout: float
    ) -> None:
        self.base_url = (url or DEFAULT_URL).rstrip("/")
        where = display_url(self.base_url)
        if model is None:
            # No default: Claude model ids are retired often, so a built-in one would rot.
            raise LLMError(
                f"LLM anthropic@{where} needs a model name: set MEMVAULT_LLM_MODEL to a Claude"
                " model id your account can use"
            )
        if api_key is None and self.base_url == DEFAULT_URL:
            raise LLMError(f"LLM anthropic@{where} needs an API key: set MEMVAULT_LLM_API_KEY")
        self.model = model
        self._name = f"anthropic:{model}" + ("" if self.base_url == DEFAULT_URL else f"@{where}")
        self._secret = api_key
        self._timeout = timeout
        self._sdk = import_sdk("anthropic")
        self._client: Any = self._sdk.Anthropic(
            base_url=self.base_url, api_key=api_key or _NO_KEY, timeout=timeout, max_retries=0
        )
        self._headers = {} if api_key else {"Authorization": self._sdk.omit}

    @property
    def name(self) -> str:
        return self._name

    def send(self, system: str, prompt: str, max_tokens: int) -> str:
        try:
            response = self._client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=system or self._sdk.omit,
                messages=[{"role": "user", "content": prompt}],
                extra_headers=self._headers,
            )
        except (self._sdk.APIError, ValueError) as error:
            raise sdk_failure(
                error, self._sdk, secret=self._secret, timeout=self._timeout
            ) from None
        texts = [
            block.text
            for block in getattr(response, "content", None) or []
            if getattr(block, "type", None) == "text" and isinstance(block.text, str)
        ]
        if not texts:
            reason = getattr(response, "stop_reason", None)
            raise AttemptFailed(f"answered without text (stop_reason {reason})", retryable=False)
        return "".join(texts)

    def close(self) -> None:
        self._client.close()
