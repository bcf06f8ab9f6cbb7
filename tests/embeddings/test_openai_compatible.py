"""The OpenAI-compatible provider against a real HTTP server on loopback."""

from __future__ import annotations

import numpy as np
import pytest

from memvault.embeddings import EmbeddingError, OpenAICompatibleEmbedder
from tests.embeddings.conftest import SERVER_DIM, bag_of_words
from tests.helpers import free_port


@pytest.fixture
def open_client():
    """A factory for embedders; every one made is closed after the test."""
    made: list[OpenAICompatibleEmbedder] = []

    def factory(url: str, **options) -> OpenAICompatibleEmbedder:
        embedder = OpenAICompatibleEmbedder(url, **options)
        made.append(embedder)
        return embedder

    yield factory
    for embedder in made:
        embedder.close()


def expected(texts: list[str]) -> np.ndarray:
    vectors = np.stack([bag_of_words(text) for text in texts])
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_vectors_come_back_in_input_order_and_unit_length(embedding_server, open_client):
    texts = ["alpha beta", "gamma", "delta epsilon zeta"]
    vectors = open_client(embedding_server.base_url).embed(texts)

    assert vectors.shape == (3, SERVER_DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(vectors, expected(texts), rtol=1e-6)


def test_texts_are_sent_in_batches_and_reassembled_in_order(embedding_server, open_client):
    texts = [f"note {i} about topic{i % 7}" for i in range(150)]
    vectors = open_client(embedding_server.base_url, batch_size=64).embed(texts)

    sizes = [len(body["input"]) for _, _, body in embedding_server.requests]
    assert sizes == [64, 64, 22]
    np.testing.assert_allclose(vectors, expected(texts), rtol=1e-6)


def test_request_names_the_model_and_sends_the_bearer_key(embedding_server, open_client):
    embedder = open_client(embedding_server.base_url, model="nomic-embed-text", api_key="sk-test")
    embedder.embed(["hello"])

    ((path, headers, body),) = embedding_server.requests
    assert path == "/v1/embeddings"
    assert headers["Authorization"] == "Bearer sk-test"
    assert body == {"model": "nomic-embed-text", "input": ["hello"]}


def test_no_key_sends_no_authorization_header(embedding_server, open_client):
    open_client(embedding_server.base_url).embed(["hello"])

    ((_, headers, _),) = embedding_server.requests
    assert "Authorization" not in headers


def test_dimension_is_learned_from_the_first_response(embedding_server, open_client):
    embedder = open_client(embedding_server.base_url + "/")
    embedder.embed(["one two"])
    assert embedder.dim == SERVER_DIM
    assert len(embedding_server.requests) == 1


def test_dimension_asked_first_embeds_one_probe(embedding_server, open_client):
    embedder = open_client(embedding_server.base_url)
    assert embedder.dim == SERVER_DIM
    assert len(embedding_server.requests) == 1


def test_name_says_model_and_endpoint(open_client):
    embedder = open_client("http://127.0.0.1:11434/v1/", model="nomic-embed-text")
    assert embedder.name == "openai:nomic-embed-text@http://127.0.0.1:11434/v1"
    assert open_client(None).name == "openai:text-embedding-3-small@https://api.openai.com/v1"


def test_empty_input_gives_zero_rows(embedding_server, open_client):
    vectors = open_client(embedding_server.base_url).embed([])
    assert vectors.shape == (0, SERVER_DIM)


def test_server_down_is_an_embedding_error_naming_the_url(open_client):
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(EmbeddingError, match="cannot connect") as caught:
        open_client(url).embed(["hello"])
    assert f"{url}/embeddings" in str(caught.value)


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("error", r"HTTP 500: .*model exploded"),
        ("malformed", "malformed JSON"),
        ("no-data", "without a `data` list"),
        ("short", "returned 1 embeddings for 2 texts"),
    ],
)
def test_bad_answers_are_embedding_errors_naming_the_problem(
    embedding_server, open_client, mode, problem
):
    embedding_server.mode = mode
    with pytest.raises(EmbeddingError, match=problem) as caught:
        open_client(embedding_server.base_url).embed(["hello", "world"])
    assert embedding_server.base_url in str(caught.value)


def test_wrong_route_is_an_embedding_error(embedding_server, open_client):
    url = embedding_server.base_url.removesuffix("/v1")
    with pytest.raises(EmbeddingError, match="HTTP 404"):
        open_client(url).embed(["hello"])


def test_a_slow_server_times_out_as_an_embedding_error(embedding_server, open_client):
    embedding_server.mode = "slow"
    with pytest.raises(EmbeddingError, match="timed out"):
        open_client(embedding_server.base_url, timeout=0.2).embed(["hello"])


def test_one_string_is_refused_rather_than_split_into_characters(open_client):
    with pytest.raises(TypeError):
        open_client("http://127.0.0.1:1/v1").embed("hello")
