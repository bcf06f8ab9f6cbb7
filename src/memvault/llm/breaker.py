"""A circuit breaker: stop calling a provider that keeps failing, and try again later.

A provider that is down would otherwise make every queued background job wait out its own
timeout and retries. After `threshold` consecutive failed calls the circuit opens: calls are
refused at once for `cooldown_seconds`, then one trial call is let through (half-open). Its
success closes the circuit; its failure opens it for another cooldown.
"""

from __future__ import annotations

import logging
import math
import threading
import time

from memvault.llm.provider import LLMUnavailable

log = logging.getLogger("memvault.llm")


class CircuitBreaker:
    def __init__(self, name: str, *, threshold: int, cooldown_seconds: float) -> None:
        self._name = name
        self._threshold = threshold
        self._cooldown = cooldown_seconds
        self._lock = threading.Lock()
        self._failures = 0
        self._last_problem = ""
        self._open_until: float | None = None
        self._trial_running = False

    def check(self) -> None:
        """Refuse without waiting while the circuit is open and cooling down."""
        with self._lock:
            self._refuse_while_cooling()

    def admit(self) -> None:
        """Let this call go, or refuse it; in half-open state only one trial goes at a time."""
        with self._lock:
            self._refuse_while_cooling()
            if self._open_until is None:
                return
            if self._trial_running:
                raise self._refusal(
                    f"LLM {self._name} is paused: a trial call is checking whether it has"
                    f" recovered from {self._failures} consecutive failures"
                    f" (last: {self._last_problem})"
                )
            self._trial_running = True

    def succeeded(self) -> bool:
        """Record an answer; True when it closed an open circuit."""
        with self._lock:
            recovered = self._open_until is not None
            self._failures = 0
            self._open_until = None
            self._trial_running = False
            return recovered

    def failed(self, problem: str) -> bool:
        """Record a failed call; True when this failure opened the circuit."""
        with self._lock:
            self._failures += 1
            self._last_problem = problem
            if self._trial_running or self._failures >= self._threshold:
                opened = self._open_until is None or self._trial_running
                self._open_until = time.monotonic() + self._cooldown
                self._trial_running = False
                return opened
            return False

    def _refuse_while_cooling(self) -> None:
        if self._open_until is None:
            return
        left = self._open_until - time.monotonic()
        if left > 0:
            raise self._refusal(
                f"LLM {self._name} is paused for {math.ceil(left)} s more after {self._failures}"
                f" consecutive failures (last: {self._last_problem})"
            )

    def _refusal(self, message: str) -> LLMUnavailable:
        log.debug("%s", message)
        return LLMUnavailable(message)
