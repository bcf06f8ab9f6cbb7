"""Embeddings from an OpenAI-compatible `POST /embeddings` endpoint: OpenAI, Ollama, LM Studio.

Servers differ in what they return beside the vectors, so only what the API promises is
read: `data[*].embedding` and `data[*].index`. Every failure becomes an EmbeddingError that
names the endpoint and what went wrong, never an httpx or JSON exception.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import httpx
import numpy as np

from memvault.embeddings.provider import EmbeddingError, normalised, text_list

DEFAULT_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"
BATCH_SIZE = 64
TIMEOUT = httpx.Timeout(60.0, connect=5.0)


class OpenAICompatibleEmbedder:
    """Embeds over HTTP, `BATCH_SIZE` texts per request; the dimension comes from the server."""

    def __init__(
        self,
        url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        batch_size: int = BATCH_SIZE,
        timeout: httpx.Timeout | float = TIMEOUT,
    ) -> None:
        self.base_url = (url or DEFAULT_URL).rstrip("/")
        self.model = model or DEFAULT_MODEL
        self.endpoint = f"{self.base_url}/embeddings"
        self._batch_size = batch_size
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout)
        self._dim: int | None = None
        self._dim_lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"openai:{self.model}@{self.base_url}"

    @property
    def dim(self) -> int:
        """Known after the first response; asked before that, one short text is embedded."""
        if self._dim is None:
            return self.embed(["dimension probe"]).shape[1]
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = text_list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [
            self._embed_batch(texts[start : start + self._batch_size])
            for start in range(0, len(texts), self._batch_size)
        ]
        return normalised(np.concatenate(batches))

    def embed_query(self, text: str) -> np.ndarray:
        """The API takes no query/document distinction: a query embeds like a document."""
        return self.embed([text])[0]

    def close(self) -> None:
        self._client.close()

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        body = self._post({"model": self.model, "input": texts})
        vectors = self._vectors(body, expected=len(texts))
        self._check_dim(vectors.shape[1])
        return vectors

    def _post(self, payload: dict[str, object]) -> object:
        try:
            response = self._client.post(self.endpoint, json=payload)
        except httpx.TimeoutException as error:
            raise self._error(f"timed out ({type(error).__name__})") from error
        except httpx.ConnectError as error:
            raise self._error(f"cannot connect: {error}") from error
        except httpx.HTTPError as error:
            raise self._error(f"request failed: {error}") from error
        if not response.is_success:
            detail = response.text.strip()[:300]
            raise self._error(f"answered HTTP {response.status_code}: {detail}")
        try:
            return response.json()
        except ValueError as error:
            raise self._error(f"answered with malformed JSON: {error}") from error

    def _vectors(self, body: object, *, expected: int) -> np.ndarray:
        """The embeddings of one response, in input order (servers may reorder `data`)."""
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise self._error("answered without a `data` list of embeddings")
        if len(data) != expected:
            raise self._error(f"returned {len(data)} embeddings for {expected} texts")
        try:
            ordered = sorted(data, key=lambda item: item["index"])
            indexes = [item["index"] for item in ordered]
            matrix = np.array([item["embedding"] for item in ordered], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as error:
            raise self._error(f"answered with malformed embeddings: {error!r}") from error
        if indexes != list(range(expected)):
            raise self._error(f"returned indexes {indexes} for {expected} texts")
        if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
            raise self._error("answered with embeddings that are not equal-length number lists")
        return matrix

    def _check_dim(self, dim: int) -> None:
        with self._dim_lock:
            if self._dim is None:
                self._dim = dim
            elif dim != self._dim:
                raise self._error(f"returned {dim}-dimensional vectors, earlier {self._dim}")

    def _error(self, problem: str) -> EmbeddingError:
        return EmbeddingError(f"embedding endpoint {self.endpoint} (model {self.model}) {problem}")
