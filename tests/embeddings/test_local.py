"""The local provider, for real, with the model files the `local` extra ships."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from memvault.embeddings import EmbeddingError, LocalEmbedder
from tests.embeddings.conftest import require_local_model


def test_embeddings_are_unit_length_float32_rows(local_embedder):
    vectors = local_embedder.embed(["first note", "second note", "third"])

    assert local_embedder.name == "local:all-MiniLM-L6-v2"
    assert local_embedder.dim == 384
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_close_meanings_score_higher_than_unrelated_text(local_embedder):
    query, close, unrelated = local_embedder.embed(
        [
            "the database migration failed",
            "schema migration error in postgres",
            "my cat sleeps in the afternoon sun",
        ]
    )
    assert query @ close > query @ unrelated + 0.2


def test_a_text_embeds_the_same_alone_or_in_a_batch(local_embedder):
    texts = [f"memory fragment number {i} about topic {i % 5}" for i in range(40)]
    together = local_embedder.embed(texts)
    alone = local_embedder.embed([texts[37]])
    np.testing.assert_allclose(together[37], alone[0], atol=1e-5)


def test_threads_can_share_one_embedder(local_embedder):
    texts = [f"thread {i} writes about caching" for i in range(8)]
    sequential = local_embedder.embed(texts)
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        results[i] = local_embedder.embed([texts[i]])[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for i, vector in results.items():
        np.testing.assert_allclose(vector, sequential[i], atol=1e-5)
    assert len(results) == len(texts)


def test_empty_input_gives_zero_rows(local_embedder):
    assert local_embedder.embed([]).shape == (0, 384)


def test_one_string_is_refused_rather_than_split_into_characters(local_embedder):
    with pytest.raises(TypeError):
        local_embedder.embed("hello")


def test_a_folder_that_is_not_a_model_fails_on_first_use_naming_it(tmp_path):
    require_local_model()
    embedder = LocalEmbedder(str(tmp_path))
    assert embedder.name == f"local:{tmp_path}"
    with pytest.raises(EmbeddingError, match="could not be loaded") as caught:
        embedder.embed(["hello"])
    assert str(tmp_path) in str(caught.value)


def test_missing_extra_is_an_error_saying_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EmbeddingError, match=r"pip install 'memvault\[local\]'"):
        LocalEmbedder().embed(["hello"])


OFFLINE_SCRIPT = textwrap.dedent(
    """
    import sys

    def no_network(event, args):
        if event in ("socket.connect", "socket.getaddrinfo"):
            raise RuntimeError(f"network used: {event} {args!r}")

    sys.addaudithook(no_network)

    from memvault.config import Settings
    from memvault.embeddings import open_embedder

    embedder = open_embedder(Settings(embeddings="local"))
    vectors = embedder.embed(["works offline", "with the packaged model"])
    print(embedder.name, vectors.shape)
    """
)


def test_packaged_model_loads_with_the_hub_offline_and_no_network(tmp_path):
    require_local_model()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "empty-hf-home"),
        "MEMVAULT_HOME": str(tmp_path / "home"),
    }
    env.pop("MEMVAULT_EMBEDDING_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "local:all-MiniLM-L6-v2 (2, 384)"
