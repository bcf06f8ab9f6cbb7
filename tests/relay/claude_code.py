"""The real Claude Code CLI against a scripted model: the host end of the stdio relay's
end-to-end test.

The CLI comes from npm at the version a test names, installed once into a cache folder the
tests own (never the repository). The model is a loopback server that speaks Anthropic's
Messages API, streamed as the CLI asks for it: it calls memvault's ``memory_search`` when
the CLI offers the tool, and once the tool's result comes back it answers with a text that
quotes it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.helpers import IN_CI, require_tool

PACKAGE = "@anthropic-ai/claude-code"
# What `npm install @anthropic-ai/claude-code` resolves to under Node 20: the newest build
# whose engines still allow it (later ones ask for Node 22).
NODE_20_DEFAULT = "2.1.197"
SEARCH_TOOL = "mcp__memvault__memory_search"
TOOL_SEARCH = "ToolSearch"
TOOL_USE_ID = "toolu_memvault_search"
SELECT_ID = "toolu_memvault_select"
ANSWER_PREFIX = "memvault answered: "


def cache_dir() -> Path:
    return Path(os.environ.get("MEMVAULT_TEST_CACHE", Path.home() / ".cache" / "memvault-tests"))


def newest_version() -> str:
    """The registry's newest Claude Code (its ``latest`` tag)."""
    npm = require_tool("npm")
    found = subprocess.run(
        [npm, "view", PACKAGE, "version"], capture_output=True, text=True, timeout=120
    )
    version = found.stdout.strip()
    if found.returncode != 0 or not version:
        _missing(f"npm could not tell {PACKAGE}'s newest version: {found.stderr.strip()[-500:]}")
    return version


def install(version: str) -> Path:
    """The ``claude`` program of Claude Code ``version``, installed once into the cache
    (whole or not at all: a run stopped half-way leaves no half an install behind)."""
    npm = require_tool("npm")
    root = cache_dir() / f"claude-code-{version}"
    program = root / "node_modules" / ".bin" / "claude"
    if program.exists():
        return program
    root.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=root.parent, prefix=f".claude-code-{version}-"))
    try:
        # Each build is a native program, so one for a newer Node runs here all the same.
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(work),
                f"{PACKAGE}@{version}",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            _missing(f"npm could not install {PACKAGE}@{version}: {done.stderr.strip()[-800:]}")
        try:
            os.replace(work, root)
        except OSError:
            if not program.exists():  # not another run's install finished meanwhile
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    shown = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=120)
    assert shown.stdout.startswith(version), f"{program} is not {version}: {shown}"
    return program


def _missing(message: str) -> None:
    import pytest

    if IN_CI:
        pytest.fail(f"{message}, and CI must run every test")
    pytest.skip(message)


class ScriptedModel:
    """``POST /v1/messages`` on loopback, streamed (SSE) or not, as the request asks.

    A request that offers ``mcp__memvault__memory_search`` is answered with a call to it
    (``query``); one that offers only ``ToolSearch`` (a build that defers MCP tools) first
    with a call that loads it, and then with the call; a request that carries the call's
    result is answered with a text quoting it; any other request (a title, a quota probe)
    with a short text. ``tool_results`` keeps the results the CLI sent back.
    """

    def __init__(self, query: str) -> None:
        self.query = query
        self.tool_results: list[dict] = []
        self.paths: list[str] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                model.paths.append(self.path)
                if not self.path.split("?")[0].endswith("/v1/messages"):
                    self._send(200, "application/json", b'{"input_tokens": 1}')
                    return
                content = model.reply(body)
                if body.get("stream"):
                    self._send(200, "text/event-stream", _stream(body, content))
                else:
                    self._send(
                        200, "application/json", json.dumps(_message(body, content)).encode()
                    )

            def do_GET(self) -> None:
                self._send(404, "application/json", b'{"error": "not here"}')

            def _send(self, status: int, kind: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def reply(self, body: dict) -> list[dict]:
        """The content blocks that answer ``body``."""
        results = {
            block.get("tool_use_id"): block
            for message in body.get("messages") or []
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        }
        search = {"type": "tool_use", "id": TOOL_USE_ID, "name": SEARCH_TOOL}
        if TOOL_USE_ID in results:
            self.tool_results.append(results[TOOL_USE_ID])
            return [{"type": "text", "text": ANSWER_PREFIX + _text_of(results[TOOL_USE_ID])}]
        offered = {tool.get("name") for tool in body.get("tools") or []}
        if SEARCH_TOOL in offered or SELECT_ID in results:
            return [{**search, "input": {"query": self.query}}]
        if TOOL_SEARCH in offered and _first_turn(body):
            # Newer builds defer MCP tools: the model fetches the one it wants by name first.
            select = {"query": f"select:{SEARCH_TOOL}"}
            return [{"type": "tool_use", "id": SELECT_ID, "name": TOOL_SEARCH, "input": select}]
        return [{"type": "text", "text": "ok"}]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _first_turn(body: dict) -> bool:
    """Whether ``body`` is the conversation's first request (the user's prompt alone)."""
    messages = body.get("messages") or []
    return len(messages) == 1 and messages[0].get("role") == "user"


def _text_of(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def _message(body: dict, content: list[dict]) -> dict:
    stop = "tool_use" if content[-1]["type"] == "tool_use" else "end_turn"
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "scripted"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _stream(body: dict, content: list[dict]) -> bytes:
    """The Messages API's event stream for a message of ``content``."""
    whole = _message(body, content)
    events: list[tuple[str, dict]] = [
        ("message_start", {"message": {**whole, "content": [], "stop_reason": None}})
    ]
    for index, block in enumerate(content):
        if block["type"] == "text":
            start, delta = {**block, "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(("content_block_start", {"index": index, "content_block": start}))
        events.append(("content_block_delta", {"index": index, "delta": delta}))
        events.append(("content_block_stop", {"index": index}))
    stop = {"stop_reason": whole["stop_reason"], "stop_sequence": None}
    events.append(("message_delta", {"delta": stop, "usage": {"output_tokens": 1}}))
    events.append(("message_stop", {}))
    return b"".join(
        f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()
        for name, data in events
    )
