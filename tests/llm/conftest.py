"""A real OpenAI- and Anthropic-compatible server on loopback, and helpers to call it."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memvault.config import Settings
from memvault.llm import AnthropicMessages, CallPolicy, Gate, GuardedLLM, OpenAIChat
from tests.helpers import IN_CI

# Fast enough for tests, and otherwise what open_llm uses.
FAST = CallPolicy(backoff_seconds=0.002, max_backoff_seconds=0.01, cooldown_seconds=0.2)


def require_sdk(module: str) -> None:
    """Skip without the extra, except in CI, which must install it and run every test."""
    if importlib.util.find_spec(module) is not None:
        return
    message = f"the `{module}` extra is not installed (pip install 'memvault[{module}]')"
    if IN_CI:
        pytest.fail(f"{message}, and CI must run every test")
    pytest.skip(message)


@dataclass
class Request:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict


class LLMServer:
    """`POST /v1/chat/completions` and `POST /v1/messages` on a loopback port, in a thread.

    Each request takes the next scripted answer from `answers`, then "ok" once they run out:
    "ok" (the completion `text`), "malformed" (not JSON), "no-text" (JSON without any
    completion), "echo" (HTTP 400 quoting the request's headers), or an HTTP status (an error
    body; 429 carries `Retry-After: 0`). Every answer waits `delay` seconds first.
    Requests are kept in `requests`; `most_at_once` is the peak of concurrent requests.
    """

    def __init__(self) -> None:
        self.answers: deque[str | int] = deque()
        self.text = "a scripted completion"
        self.delay = 0.0
        self.requests: list[Request] = []
        self.most_at_once = 0
        self._at_once = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                headers = {name.lower(): value for name, value in self.headers.items()}
                status, extra, payload = server.answer(Request(self.path, headers, body))
                # A client that gave up (the timeout test) has closed its end already.
                with contextlib.suppress(ConnectionError):
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    for name, value in extra.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.root_url = f"http://127.0.0.1:{self._httpd.server_port}"
        self.base_url = f"{self.root_url}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def answer(self, request: Request) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.requests.append(request)
            answer = self.answers.popleft() if self.answers else "ok"
            self._at_once += 1
            self.most_at_once = max(self.most_at_once, self._at_once)
        try:
            time.sleep(self.delay)
            return self._reply(request, answer)
        finally:
            with self._lock:
                self._at_once -= 1

    def _reply(self, request: Request, answer: str | int) -> tuple[int, dict[str, str], bytes]:
        if isinstance(answer, int):
            extra = {"Retry-After": "0"} if answer == 429 else {}
            return answer, extra, b'{"error": {"message": "scripted failure"}}'
        if answer == "malformed":
            return 200, {}, b"<html>not json"
        if answer == "echo":
            return 400, {}, json.dumps({"error": {"headers": request.headers}}).encode()
        messages_api = request.path == "/v1/messages"
        if answer == "no-text":
            reply = {"content": []} if messages_api else {"choices": []}
            return 200, {}, json.dumps(reply).encode()
        model = request.body["model"]
        if messages_api:
            reply = {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": self.text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        else:
            reply = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.text},
                        "finish_reason": "stop",
                    }
                ],
            }
        return 200, {}, json.dumps(reply).encode()

    def __enter__(self) -> LLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(10)


@pytest.fixture
def llm_server():
    with LLMServer() as server:
        yield server


@pytest.fixture
def make_llm():
    """A factory for guarded providers on a loopback URL; every one made is closed after."""
    made: list[GuardedLLM] = []

    def factory(
        url: str,
        *,
        provider: str = "openai",
        model: str = "test-model",
        api_key: str | None = None,
        timeout: float = 5.0,
        gate: Gate | None = None,
        max_input_tokens: int = 6000,
        policy: CallPolicy = FAST,
    ) -> GuardedLLM:
        require_sdk(provider)
        transport = (OpenAIChat if provider == "openai" else AnthropicMessages)(
            url, model, api_key, timeout=timeout
        )
        llm = GuardedLLM(
            transport, gate=gate or Gate(2), max_input_tokens=max_input_tokens, policy=policy
        )
        made.append(llm)
        return llm

    yield factory
    for llm in made:
        llm.close()


@pytest.fixture
def settings(tmp_path, monkeypatch):
    """Settings built from keywords alone, whatever this machine's environment says."""
    for name in list(os.environ):
        if name.startswith(("MEMVAULT_", "OPENAI_", "ANTHROPIC_", "AGENTMEMORY_")):
            monkeypatch.delenv(name)

    def build(**values) -> Settings:
        return Settings(home=tmp_path / "home", **values)

    return build
