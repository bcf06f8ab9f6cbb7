"""What a provider's SDK wrapper does for one attempt, and how SDK errors are judged.

The official `openai` and `anthropic` SDKs raise the same family of errors (timeout,
connection, HTTP status, malformed body). Each failure is turned here into one verdict for
the retry loop and the circuit breaker: worth retrying or not, the provider's fault or the
request's.
"""

from __future__ import annotations

import importlib
from functools import partial
from types import ModuleType
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from memvault.llm.provider import LLMError

# The provider is up and refused this one request (bad input, too large): these say nothing
# about the next call, so they do not count towards opening the circuit.
REQUEST_FAULTS = frozenset({400, 413, 422})
_DETAIL_CHARS = 300
# A gateway or a local server may need no key, but the SDKs refuse to build a client without
# one; the Authorization header is then left out of every request, so this value is never sent.
_NO_KEY = "no-key"


class AttemptFailed(Exception):
    """One attempt failed; `problem` is already free of the API key."""

    def __init__(
        self,
        problem: str,
        *,
        retryable: bool,
        provider_fault: bool = True,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(problem)
        self.problem = problem
        self.retryable = retryable
        self.provider_fault = provider_fault
        self.retry_after = retry_after


class Transport(Protocol):
    """One provider's API, called once per attempt, without retries of its own."""

    @property
    def name(self) -> str: ...

    def send(self, system: str, prompt: str, max_tokens: int) -> str:
        """The completion text; raises AttemptFailed."""
        ...

    def close(self) -> None: ...


class SdkClient:
    """What the `openai` and `anthropic` wrappers share: the base URL and the name shown for
    it, the SDK's client built with the SDK's own retries off, a failed call judged, and
    closing. A provider says which SDK it uses, its default URL, and its model and name."""

    SDK: str
    DEFAULT_URL: str

    def __init__(
        self, url: str | None, model: str | None, api_key: str | None, *, timeout: float
    ) -> None:
        self.base_url = (url or self.DEFAULT_URL).rstrip("/")
        self.model, self._name = self._model_and_name(display_url(self.base_url), model, api_key)
        self._sdk = import_sdk(self.SDK)
        client = self._sdk.OpenAI if self.SDK == "openai" else self._sdk.Anthropic
        self._client: Any = client(
            base_url=self.base_url, api_key=api_key or _NO_KEY, timeout=timeout, max_retries=0
        )
        self._headers = {} if api_key else {"Authorization": self._sdk.omit}
        # A failed call is judged knowing the key (to keep it out of the problem) and the timeout.
        self._failure = partial(sdk_failure, sdk=self._sdk, secret=api_key, timeout=timeout)

    def _model_and_name(
        self, where: str, model: str | None, api_key: str | None
    ) -> tuple[str, str]:
        """The model to ask for and the provider's name; LLMError when one is missing."""
        raise NotImplementedError

    @property
    def name(self) -> str:
        return self._name

    def close(self) -> None:
        self._client.close()


def import_sdk(module: str) -> ModuleType:
    """The provider's SDK, imported only when that provider is used: both are optional."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise LLMError(
            f"MEMVAULT_LLM={module} needs the `{module}` package, which is not installed:"
            f" pip install 'memvault[{module}]'"
        ) from error


def display_url(url: str) -> str:
    """`url` without any user:password part, fit for names, messages and logs."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def sdk_failure(
    error: Exception, sdk: ModuleType, *, secret: str | None, timeout: float
) -> AttemptFailed:
    """The verdict on an exception raised by an `openai` or `anthropic` client call.

    Raise it `from None`: the SDK's exception may quote a reply that echoes the key back.
    """
    if isinstance(error, sdk.APITimeoutError):
        # Not retried: a server too slow once is likely slow again, and each retry would hold
        # a gate slot for another full timeout.
        return AttemptFailed(f"timed out after {timeout:g} s", retryable=False)
    if isinstance(error, sdk.APIConnectionError):
        reason = error.__cause__ or error
        return AttemptFailed(_redacted(f"cannot connect: {reason}", secret), retryable=True)
    if isinstance(error, sdk.APIStatusError):
        status = error.status_code
        detail = " ".join(error.response.text.split())[:_DETAIL_CHARS]
        return AttemptFailed(
            _redacted(f"answered HTTP {status}: {detail}", secret),
            retryable=status == 429 or status >= 500,
            provider_fault=status not in REQUEST_FAULTS,
            retry_after=_retry_after(error.response.headers.get("retry-after")),
        )
    return AttemptFailed(
        _redacted(f"answered with a malformed response: {error}", secret), retryable=False
    )


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header; the HTTP-date form is left to the normal backoff."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _redacted(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text
