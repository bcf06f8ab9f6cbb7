"""Completions from Anthropic's Messages API, through the official `anthropic` SDK.

The SDK is the `anthropic` extra. Its own retries are switched off: retries, backoff and the
circuit breaker are memvault's, the same for every provider.
"""

from __future__ import annotations

from memvault.llm.provider import LLMError
from memvault.llm.transport import AttemptFailed, SdkClient

DEFAULT_URL = "https://api.anthropic.com"


class AnthropicMessages(SdkClient):
    """`POST {url}/v1/messages` with a system prompt and one user message."""

    SDK = "anthropic"
    DEFAULT_URL = DEFAULT_URL

    def _model_and_name(
        self, where: str, model: str | None, api_key: str | None
    ) -> tuple[str, str]:
        if model is None:
            # No default: Claude model ids are retired often, so a built-in one would rot.
            raise LLMError(
                f"LLM anthropic@{where} needs a model name: set MEMVAULT_LLM_MODEL to a Claude"
                " model id your account can use"
            )
        if api_key is None and self.base_url == DEFAULT_URL:
            raise LLMError(f"LLM anthropic@{where} needs an API key: set MEMVAULT_LLM_API_KEY")
        return model, f"anthropic:{model}" + ("" if self.base_url == DEFAULT_URL else f"@{where}")

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
            raise self._failure(error) from None
        texts = [
            block.text
            for block in getattr(response, "content", None) or []
            if getattr(block, "type", None) == "text" and isinstance(block.text, str)
        ]
        if not texts:
            reason = getattr(response, "stop_reason", None)
            raise AttemptFailed(f"answered without text (stop_reason {reason})", retryable=False)
        return "".join(texts)
