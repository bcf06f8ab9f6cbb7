"""Embedding providers for semantic search: a local model, an OpenAI-compatible API, or none.

`open_embedder` turns settings into a provider without loading any model, so choosing one is
cheap enough for server start; the first `embed` pays for loading.
"""

from __future__ import annotations

from importlib.util import find_spec

from memvault.config import Settings
from memvault.embeddings.local import INSTALL_HINT, LocalEmbedder
from memvault.embeddings.openai_compatible import OpenAICompatibleEmbedder
from memvault.embeddings.provider import Embedder, EmbeddingError

__all__ = [
    "Embedder",
    "EmbeddingError",
    "LocalEmbedder",
    "OpenAICompatibleEmbedder",
    "local_model_available",
    "open_embedder",
]


def local_model_available() -> bool:
    """Whether sentence-transformers is installed, found without importing it (or torch)."""
    return find_spec("sentence_transformers") is not None


def open_embedder(settings: Settings) -> Embedder | None:
    """The provider `settings.embeddings` asks for; None when semantic search is off.

    `auto` means the local model when the `local` extra is installed and none otherwise;
    asking for `local` explicitly without the extra is an error, not a silent fallback.
    """
    choice = settings.embeddings
    if choice == "none":
        return None
    if choice == "openai":
        key = settings.embedding_api_key
        return OpenAICompatibleEmbedder(
            settings.embedding_url,
            settings.embedding_model,
            key.get_secret_value() if key else None,
        )
    if not local_model_available():
        if choice == "auto":
            return None
        raise EmbeddingError(
            f"MEMVAULT_EMBEDDINGS=local needs sentence-transformers, which is not installed:"
            f" {INSTALL_HINT}"
        )
    return LocalEmbedder(settings.embedding_model)
