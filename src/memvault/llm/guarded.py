"""An LLM with the protections background work needs around every call.

In order: the prompt is cut to the input limit, a paused provider is refused at once, the
process-wide gate is entered, and the call is attempted with backoff between retries. Only
transient failures (connection errors, 429, 5xx) are retried; a call that fails in the end
counts towards the circuit breaker unless the provider merely rejected that one request.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass

from memvault.llm.breaker import CircuitBreaker
from memvault.llm.budget import estimate_tokens, fit
from memvault.llm.gate import Gate
from memvault.llm.provider import LLMError
from memvault.llm.transport import AttemptFailed, Transport

log = logging.getLogger("memvault.llm")


@dataclass(frozen=True)
class CallPolicy:
    """How hard to try: attempts per call, backoff between them, and when to stop calling."""

    attempts: int = 3
    backoff_seconds: float = 1.0
    max_backoff_seconds: float = 20.0
    failure_threshold: int = 5
    cooldown_seconds: float = 60.0

    def backoff(self, retry: int, retry_after: float | None) -> float:
        """Seconds before retry number `retry` (1-based): the server's word, else exponential.

        Jitter keeps the gate's concurrent calls from retrying in lockstep.
        """
        if retry_after is not None:
            return min(retry_after, self.max_backoff_seconds)
        delay = min(self.max_backoff_seconds, self.backoff_seconds * 2 ** (retry - 1))
        return delay * random.uniform(0.5, 1.0)


class GuardedLLM:
    """Implements `LLM` over one provider's transport; see the module docstring."""

    def __init__(
        self,
        transport: Transport,
        *,
        gate: Gate,
        max_input_tokens: int,
        policy: CallPolicy | None = None,
    ) -> None:
        self.gate = gate
        self._transport = transport
        self._max_input_tokens = max_input_tokens
        self._policy = policy or CallPolicy()
        self._breaker = CircuitBreaker(
            transport.name,
            threshold=self._policy.failure_threshold,
            cooldown_seconds=self._policy.cooldown_seconds,
        )

    @property
    def name(self) -> str:
        return self._transport.name

    def complete(self, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
        self._breaker.check()
        prompt = self._fitted(prompt)
        # Backoff sleeps keep the slot: a provider that asks to slow down gets fewer calls.
        with self.gate:
            self._breaker.admit()
            try:
                return self._attempts(system, prompt, max_tokens)
            except LLMError:
                raise
            except Exception as error:
                # A bug, not an answer: still recorded, or a half-open trial would never end.
                self._breaker.failed(f"unexpected {type(error).__name__}")
                raise

    def close(self) -> None:
        self._transport.close()

    def _fitted(self, prompt: str) -> str:
        fitted = fit(prompt, self._max_input_tokens)
        if fitted is not prompt:
            log.debug(
                "LLM %s: prompt of about %d tokens cut to %d",
                self.name,
                estimate_tokens(prompt),
                estimate_tokens(fitted),
            )
        return fitted

    def _attempts(self, system: str, prompt: str, max_tokens: int) -> str:
        started = time.monotonic()
        attempts = self._policy.attempts
        attempt = 0
        while True:
            attempt += 1
            try:
                text = self._transport.send(system, prompt, max_tokens)
            except AttemptFailed as failure:
                if not failure.retryable or attempt >= attempts:
                    raise self._failed(failure, attempt) from None
                delay = self._policy.backoff(attempt, failure.retry_after)
                log.warning(
                    "LLM %s attempt %d of %d %s; retrying in %.1f s",
                    self.name,
                    attempt,
                    attempts,
                    failure.problem,
                    delay,
                )
                time.sleep(delay)
                continue
            if self._breaker.succeeded():
                log.warning("LLM %s answers again; calls resume", self.name)
            log.debug(
                "LLM %s answered in %.2f s (attempt %d): %d characters in, %d out",
                self.name,
                time.monotonic() - started,
                attempt,
                len(system) + len(prompt),
                len(text),
            )
            return text

    def _failed(self, failure: AttemptFailed, attempt: int) -> LLMError:
        tries = f" (after {attempt} attempts)" if attempt > 1 else ""
        message = f"LLM {self.name} {failure.problem}{tries}"
        log.warning("%s", message)
        if not failure.provider_fault:
            self._breaker.succeeded()
        elif self._breaker.failed(failure.problem):
            log.warning(
                "LLM %s: calls paused for %.0f s after repeated failures",
                self.name,
                self._policy.cooldown_seconds,
            )
        return LLMError(message)
