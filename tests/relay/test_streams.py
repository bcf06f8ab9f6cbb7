"""Streamed answers through the relay: a 2026-07-28 host's discover → listen → tools/list
against the real server, the official client's listen, and, against a server of the
test's own, each event of a stream reaching the host while the stream is still open,
other requests answered meanwhile, and whole lines only on stdout."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest

from tests.mcp.clients import TOOL_NAMES, call, stdio
from tests.relay.lines import MODERN, LineRelay, modern_meta

SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"


def _modern(request_id: int, method: str, **params: object) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**modern_meta(), **params},
    }


def test_discover_then_listen_then_tools_list_over_the_2026_revision(server):
    with LineRelay(server.home, MEMVAULT_URL=server.url) as relay:
        discovered = relay.ask(_modern(1, "server/discover"))
        assert MODERN in discovered["result"]["supportedVersions"], discovered

        began = time.monotonic()
        relay.send(_modern(2, "subscriptions/listen", notifications={"toolsListChanged": True}))
        acknowledged = relay.next()
        assert time.monotonic() - began < 10  # at once, not when the stream ends
        assert acknowledged["method"] == "notifications/subscriptions/acknowledged", acknowledged
        assert acknowledged["params"]["_meta"][SUBSCRIPTION_KEY] == 2

        # The listen stream is still open; other requests are answered meanwhile.
        listed = relay.ask(_modern(3, "tools/list"))
        assert {tool["name"] for tool in listed["result"]["tools"]} == TOOL_NAMES
        found = relay.ask(
            _modern(4, "tools/call", name="memory_search", arguments={"query": "anything"})
        )
        assert found["result"]["isError"] is False, found

        # The host ends the stream; the relay goes on serving.
        relay.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
        )
        again = relay.ask(_modern(5, "tools/list"))
        assert len(again["result"]["tools"]) == len(TOOL_NAMES)
        assert relay.process.poll() is None


def test_the_official_client_listens_and_lists_tools_through_the_relay(server):
    async def main() -> None:
        async with stdio(server.home, mode=MODERN, MEMVAULT_URL=server.url) as client:
            with anyio.fail_after(30):
                async with client.listen(tools_list_changed=True) as subscription:
                    assert subscription.honored.tools_list_changed is True
                    listed = await client.list_tools()
                    assert {tool.name for tool in listed.tools} == TOOL_NAMES
                    found = await call(client, "memory_search", {"query": "anything at all"})
                    assert found.structured_content["query"] == "anything at all"

    anyio.run(main)


class HeldStream:
    """An MCP endpoint on loopback whose ``test/stream`` answer is an event stream sent
    without a length: one progress notification, then nothing until the test lets it go
    on (``release``), then the result. ``test/ends`` sends the notification and ends with
    no result; ``test/big`` answers with several large events at once; anything else is
    answered as JSON at once."""

    BIG = 200_000

    def __init__(self) -> None:
        self.released = threading.Event()
        held = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # livez: a memvault server answers here
                self._start(200, "application/json", b'{"service": "memvault"}')

            def do_POST(self) -> None:
                message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if "id" not in message:
                    self._start(202, "application/json", b"")
                    return
                request_id, method = message["id"], message["method"]
                if method == "test/stream":
                    self._start(200, "text/event-stream")
                    progress = {"progressToken": request_id, "progress": 1}
                    self._event(
                        {"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}
                    )
                    held.released.wait(60)
                    self._event({"jsonrpc": "2.0", "id": request_id, "result": {"done": True}})
                elif method == "test/ends":  # a stream that ends with no answer
                    self._start(200, "text/event-stream")
                    progress = {"progressToken": request_id, "progress": 1}
                    self._event(
                        {"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}
                    )
                elif method == "test/big":
                    self._start(200, "text/event-stream")
                    for n in range(3):
                        note = {"n": n, "text": str(request_id) * HeldStream.BIG}
                        self._event(
                            {"jsonrpc": "2.0", "method": "notifications/message", "params": note}
                        )
                    self._event({"jsonrpc": "2.0", "id": request_id, "result": {}})
                else:
                    answer = {"jsonrpc": "2.0", "id": request_id, "result": {"method": method}}
                    self._start(200, "application/json", json.dumps(answer).encode())

            def _start(self, status: int, kind: str, body: bytes | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                if body is not None:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if body:
                    self.wfile.write(body)

            def _event(self, message: dict) -> None:
                self.wfile.write(f"event: message\r\ndata: {json.dumps(message)}\r\n\r\n".encode())
                self.wfile.flush()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def held():
    server = HeldStream()
    yield server
    server.close()


def test_each_event_reaches_the_host_while_the_stream_is_open(held, tmp_path):
    with LineRelay(tmp_path, MEMVAULT_URL=held.url) as relay:
        relay.send({"jsonrpc": "2.0", "id": 1, "method": "test/stream", "params": {}})
        progress = relay.next()
        assert progress["method"] == "notifications/progress", progress
        assert not held.released.is_set()  # sent on before the stream went on

        # The open stream holds up no other request.
        assert relay.ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"] == {
            "method": "tools/list"
        }
        held.released.set()
        assert relay.read(1)["result"] == {"done": True}


def test_a_stream_that_ends_without_an_answer_is_an_error_that_says_so(held, tmp_path):
    with LineRelay(tmp_path, MEMVAULT_URL=held.url) as relay:
        relay.send({"jsonrpc": "2.0", "id": 1, "method": "test/ends", "params": {}})
        assert relay.next()["method"] == "notifications/progress"
        ended = relay.next()
    assert ended["id"] == 1 and ended["error"]["code"] == -32000, ended
    assert "ended the stream without answering" in ended["error"]["message"]


def test_a_cancelled_stream_is_closed_and_gets_no_answer(held, tmp_path):
    with LineRelay(tmp_path, MEMVAULT_URL=held.url) as relay:
        relay.send({"jsonrpc": "2.0", "id": 1, "method": "test/stream", "params": {}})
        assert relay.next()["method"] == "notifications/progress"
        relay.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        )
        # The next line is the next request's answer: nothing more for the cancelled one.
        assert relay.ask({"jsonrpc": "2.0", "id": 2, "method": "ping"})["id"] == 2
        assert relay.process.stdout is not None
        relay.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert json.loads(relay.process.stdout.readline())["id"] == 3


def test_answers_from_many_streams_at_once_are_whole_lines(held, tmp_path):
    requests = 12
    with LineRelay(tmp_path, MEMVAULT_URL=held.url) as relay:
        for n in range(requests):
            relay.send({"jsonrpc": "2.0", "id": n, "method": "test/big", "params": {}})
        assert relay.process.stdout is not None
        lines = [relay.process.stdout.readline() for _ in range(requests * 4)]
    messages = [json.loads(line) for line in lines]  # each line one whole message
    assert sorted(m["id"] for m in messages if "id" in m) == list(range(requests))
    notes = [m["params"] for m in messages if "method" in m]
    assert len(notes) == requests * 3
    assert all(len(note["text"]) % HeldStream.BIG == 0 for note in notes)
