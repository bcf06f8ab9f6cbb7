"""Completions from an OpenAI-compatible chat API: OpenAI, Ollama, LM Studio, vLLM, OpenRouter.

Uses the official `openai` SDK (the `openai` extra) with its own retries switched off:
retries, backoff and the circuit breaker are memvault's, the same for every provider.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from memvault.llm.provider import LLMError
from memvault.llm.transport import AttemptFailed, SdkClient

DEFAULT_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
OPENAI_HOST = "api.openai.com"


class OpenAIChat(SdkClient):
    """`POST {url}/chat/completions` with a system and a user message."""

    SDK = "openai"
    DEFAULT_URL = DEFAULT_URL

    def _model_and_name(
        self, where: str, model: str | None, api_key: str | None
    ) -> tuple[str, str]:
        official = urlsplit(self.base_url).hostname == OPENAI_HOST
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
        model = model or DEFAULT_MODEL
        return model, f"openai:{model}@{where}"

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
            raise self._failure(error) from None
        choices = getattr(response, "choices", None)
        if not choices:
            raise AttemptFailed("answered without any choices", retryable=False)
        text = getattr(choices[0].message, "content", None)
        if not isinstance(text, str):
            reason = getattr(choices[0], "finish_reason", None)
            raise AttemptFailed(f"answered without text (finish_reason {reason})", retryable=False)
        return text
