"""What every LLM provider promises, and the errors callers are expected to handle."""

from __future__ import annotations

from typing import Protocol

from memvault.errors import MemvaultError


class LLMError(MemvaultError):
    """An LLM call failed; the message names the provider, its model and URL, and the cause."""


class LLMUnavailable(LLMError):
    """No call was made (circuit open, or no provider): fall back to the offline pipeline."""


class LLM(Protocol):
    """A text-in, text-out model for background work: summaries, fragments, compression."""

    @property
    def name(self) -> str:
        """Provider, model and URL, e.g. ``openai:gpt-4o-mini@https://api.openai.com/v1``."""
        ...

    def complete(self, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
        """The model's answer to `prompt` under the `system` instructions."""
        ...
