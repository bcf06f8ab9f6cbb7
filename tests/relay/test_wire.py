"""What the relay does with the shapes streamable HTTP allows: answers as SSE events, a
protocol session the server names, the secret, and a server that refuses it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memvault.relay.event_stream import EventStream
from tests.helpers import Server
from tests.relay.lines import LineRelay, initialize


class StreamingServer:
    """An MCP endpoint on loopback that answers initialize as an SSE stream (a log
    notification, then the result) and names a session, and echoes the headers of every
    other request back as its result."""

    def __init__(self) -> None:
        self.posted: list[object] = []  # the id (None: a notification) of each POST
        streaming = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # livez: a memvault server answers here
                self._send(200, "application/json", b'{"service": "memvault"}')

            def do_POST(self) -> None:
                message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                streaming.posted.append(message.get("id"))
                if "id" not in message:
                    self._send(202, "application/json", b"")
                elif message["method"] == "initialize":
                    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
                    result = {"protocolVersion": "2025-06-18", "serverInfo": {"name": "sse"}}
                    answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
                    events = f"event: message\ndata: {json.dumps(note)}\n\n"
                    events += f"event: message\r\ndata: {json.dumps(answer)}\r\n\r\n"
                    self._send(200, "text/event-stream", events.encode(), session="s-42")
                else:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    answer = {"jsonrpc": "2.0", "id": message["id"], "result": headers}
                    self._send(200, "application/json", json.dumps(answer).encode())

            def _send(self, status: int, kind: str, body: bytes, session: str = "") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                if session:
                    self.send_header("Mcp-Session-Id", session)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def streaming():
    server = StreamingServer()
    yield server
    server.close()


def test_sse_answers_are_relayed_as_lines_and_the_session_is_kept(streaming, tmp_path):
    with LineRelay(tmp_path, MEMVAULT_URL=streaming.url, MEMVAULT_SECRET="s3cret") as relay:
        relay.send(initialize(1))
        assert relay.process.stdout is not None
        first = json.loads(relay.process.stdout.readline())
        assert first["method"] == "notifications/message"  # what the server sent first
        assert relay.read(1)["result"]["serverInfo"]["name"] == "sse"
        echoed = relay.ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"]
    assert echoed["mcp-session-id"] == "s-42"
    assert echoed["mcp-protocol-version"] == "2025-06-18"
    assert echoed["accept"] == "application/json, text/event-stream"
    assert echoed["authorization"] == "Bearer s3cret"


def test_a_2026_request_carries_the_routing_headers_of_its_revision(streaming, tmp_path):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    call = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "mémoire", "arguments": {}, "_meta": meta},
    }
    with LineRelay(tmp_path, MEMVAULT_URL=streaming.url) as relay:
        echoed = relay.ask(call)["result"]
    assert echoed["mcp-protocol-version"] == "2026-07-28"
    assert echoed["mcp-method"] == "tools/call"
    assert echoed["mcp-name"] == "=?base64?bcOpbW9pcmU=?="  # not ASCII: MCP's base64 form


@pytest.mark.parametrize(
    "version",
    ["2026-07-28\r\nX-Injected: yes", "2026-07-28\nX-Injected: yes", "x" * 200, "", 20260728],
    ids=["crlf", "lf", "long", "empty", "number"],
)
def test_a_protocol_version_that_is_no_token_is_refused_and_sent_nowhere(
    streaming, tmp_path, version
):
    meta = {"io.modelcontextprotocol/protocolVersion": version}
    request = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": meta}}
    with LineRelay(tmp_path, MEMVAULT_URL=streaming.url) as relay:
        note = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"_meta": meta}}
        relay.send(note)
        refused = relay.ask(request)
        assert refused["error"]["code"] == -32602, refused
        assert "not a protocol version" in refused["error"]["message"]
        meta["io.modelcontextprotocol/protocolVersion"] = "2026-07-28"
        echoed = relay.ask({**request, "id": 6})["result"]  # the relay goes on
    assert echoed["mcp-protocol-version"] == "2026-07-28"
    assert streaming.posted == [6]  # neither the refused request nor the notification


def test_a_wrong_secret_is_an_error_that_says_which_setting_to_fix(tmp_path):
    server = Server(tmp_path / "home", env={"MEMVAULT_SECRET": "right"}).start()
    try:
        with LineRelay(server.home, MEMVAULT_URL=server.url, MEMVAULT_SECRET="right") as good:
            assert good.ask(initialize(1))["result"]["serverInfo"]["name"] == "memvault"
        with LineRelay(server.home, MEMVAULT_URL=server.url, MEMVAULT_SECRET="wrong") as bad:
            refused = bad.ask(initialize(1))
    finally:
        server.stop()
    assert "refused the secret (HTTP 401): set MEMVAULT_SECRET" in refused["error"]["message"]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_an_event_stream_cut_anywhere_gives_the_same_events(size):
    stream = (
        b"event: message\r\ndata: one\r\n\r\n"
        b": ping\r\n\r\n"
        b"data: two\ndata: lines\n\n"
        b"id: 3\rdata:three\r\r"
        b"data: unfinished"
    )
    events = EventStream()
    found = [
        data for n in range(0, len(stream), size) for data in events.feed(stream[n : n + size])
    ]
    assert found == [b"one", b"two\nlines", b"three"]
