"""A real OpenAI- and Anthropic-compatible server on loopback that records requests and
returns scripted completions: the LLM in every test that needs one."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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
    `respond`, when set, answers instead: it gets the request and returns the completion
    text, or an HTTP status to fail with.
    """

    def __init__(self) -> None:
        self.answers: deque[str | int] = deque()
        self.text = "a scripted completion"
        self.delay = 0.0
        self.requests: list[Request] = []
        self.respond: Callable[[Request], str | int] | None = None
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
            if self.respond is not None:
                answer: str | int = "respond"
            else:
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
        text = self.text
        if answer == "respond" and self.respond is not None:
            scripted = self.respond(request)
            if isinstance(scripted, int):
                return scripted, {}, b'{"error": {"message": "scripted failure"}}'
            text = scripted
        model = request.body["model"]
        if messages_api:
            reply = {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
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
                        "message": {"role": "assistant", "content": text},
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
