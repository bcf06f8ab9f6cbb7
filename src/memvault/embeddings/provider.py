"""What every embedding provider promises, and the error each one raises."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from memvault.errors import MemvaultError


class EmbeddingError(MemvaultError):
    """An embedding provider could not produce vectors; the message names it and the cause."""


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors of one fixed length."""

    @property
    def name(self) -> str:
        """Stable identity stored beside each vector: vectors of two names never mix."""
        ...

    @property
    def dim(self) -> int:
        """Vector length."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Documents: shape (len(texts), dim), float32, each row L2-normalised; batches
        internally."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """One search query: shape (dim,), unit length. Models trained with a query prefix
        (e5) embed a query differently from a document; others as `embed([text])[0]`."""
        ...


def normalised(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length as float32, so a dot product is the cosine.

    An all-zero row stays zero instead of becoming NaN.
    """
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.maximum(norms, np.finfo(np.float32).tiny)


def text_list(texts: Sequence[str]) -> list[str]:
    """The texts as a list; one bare string is refused, not embedded character by character."""
    if isinstance(texts, str):
        raise TypeError("embed takes a sequence of texts, not one string")
    return list(texts)
