"""Ingest work never holds up the event loop: while a large event is being redacted, the
server keeps answering every other request."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import httpx

from tests.helpers import envelope, wait_for

BODY_LIMIT = 64 * 2**20
# Openers with no closer: what froze the server when redaction rescanned for each one. Now
# the first opener takes the rest of the string, and the event stored is a few bytes, but
# looking for every rule's triggers in 16 MiB still takes a good part of a second.
BIG_DATA = {"tool_name": "Bash", "tool_output": "<private>" * (16 * 2**20 // 9)}


def _unread_bytes(server_port: int, client_port: int) -> int | None:
    """Bytes the server's end of a loopback connection has received but not yet read."""
    local, remote = f"0100007F:{server_port:04X}", f"0100007F:{client_port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == local and fields[2] == remote:
            return int(fields[4].split(":")[1], 16)
    return None


class _BigRequest:
    """One POST on a raw socket: the body is sent whole, the answer read on a thread."""

    def __init__(self, port: int, body: bytes) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.port = port
        self.answer = b""
        self.done = threading.Event()
        head = (
            f"POST /agentmemory/observe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n"
        ).encode()
        self.sent = threading.Event()
        threading.Thread(target=self._send, args=(head + body,), daemon=True).start()
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, data: bytes) -> None:
        self.sock.sendall(data)
        self.sent.set()

    def _read(self) -> None:
        chunks = []
        while chunk := self.sock.recv(65536):
            chunks.append(chunk)
        self.answer = b"".join(chunks)
        self.done.set()

    def read_by_server(self) -> bool:
        """The whole body has left this socket and the server has read all of it."""
        client_port = self.sock.getsockname()[1]
        return self.sent.is_set() and _unread_bytes(self.port, client_port) == 0

    def result(self) -> dict:
        assert self.done.wait(120), "the large event was never answered"
        self.sock.close()
        head, _, body = self.answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 201"), head
        return json.loads(body)


def test_livez_and_a_small_event_are_answered_while_a_large_event_is_redacted(start_server):
    server = start_server({"MEMVAULT_MAX_BODY_BYTES": str(BODY_LIMIT)})
    body = json.dumps(envelope("big", 0, data=BIG_DATA)).encode()
    big = _BigRequest(server.port, body)
    wait_for(big.read_by_server, timeout=60)

    with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=60) as client:
        assert client.get("/livez").status_code == 200
        assert not big.done.is_set(), "livez was answered only after the large event"
        small = client.post("/observe", json=envelope("small", 1)).json()
    stored = big.result()
    # The small event came after the large one was read, and was stored first: the large
    # one's redaction did not hold it up.
    assert small["eventSeq"] < stored["eventSeq"]
    with httpx.Client(base_url=f"{server.url}/agentmemory", timeout=60) as client:
        (observation,) = client.get("/observations", params={"sessionId": "big"}).json()[
            "observations"
        ]
    assert "<private>" not in json.dumps(observation)
