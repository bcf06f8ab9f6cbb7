"""The relay's stdio side: newline-delimited JSON-RPC from the host, each message relayed
on a thread of its own (a slow tool call does not hold up the others), the answers written
back one line each.

Only protocol goes to stdout; diagnostics go to stderr. The relay ends when stdin closes
(answers already on their way get a moment to arrive) or on SIGINT or SIGTERM, at once.
A server that goes away answers the requests in flight with an error that says so; the
next request finds or starts a server again.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time

from memvault import server_process
from memvault.relay.endpoint import (
    SERVER_UNAVAILABLE,
    Endpoint,
    Unavailable,
    error,
    expects_answer,
)

TYPE_CHECKING = False  # typing is not imported at run time: a host waits for every import
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, BinaryIO

PARSE_ERROR = -32700
EOF_GRACE_SECONDS = 0.5


class Stopped(BaseException):
    """A signal asked the relay to end."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Relay:
    """One host connection: its stdout, the endpoint, and whether a server is known to answer."""

    def __init__(self, environ: Mapping[str, str], out: BinaryIO) -> None:
        self.environ = environ
        self.out = out
        self.endpoint = Endpoint(
            server_process.server_url(environ), server_process.server_secret(environ)
        )
        self.connected = False
        self._connecting = threading.Lock()
        self._writing = threading.Lock()
        self.in_flight: list[threading.Thread] = []

    def connect(self) -> None:
        """Make sure a server answers, starting one if none does (``StartFailed`` if not)."""
        with self._connecting:
            if not self.connected:
                self.endpoint.url = server_process.ensure_running(self.environ)
                self.connected = True

    def connect_in_background(self) -> None:
        """Find or start the server while the host is still sending its first message."""

        def connect() -> None:
            with contextlib.suppress(server_process.StartFailed):  # a request reports it
                self.connect()

        threading.Thread(target=connect, daemon=True).start()

    def receive(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError as exc:
            self.write([error(None, PARSE_ERROR, f"the line is not JSON ({exc})")])
            return
        thread = threading.Thread(target=self.relay, args=(message,), daemon=True)
        thread.start()
        self.in_flight = [t for t in self.in_flight if t.is_alive()] + [thread]

    def relay(self, message: Any) -> None:
        try:
            self.connect()
            answers = self.endpoint.send(message)
        except server_process.StartFailed as exc:
            warn(str(exc))
            answers = [error(message, SERVER_UNAVAILABLE, f"no memvault server: {exc}")]
        except Unavailable as exc:
            self.connected = False
            text = (
                f"the memvault server at {self.endpoint.url} did not answer ({exc}); "
                "the next request looks for it again"
            )
            warn(text)
            answers = [error(message, SERVER_UNAVAILABLE, text)]
        if expects_answer(message):
            self.write(answers)
        # A notification's answers are the server's business: the host expects none.

    def write(self, answers: list[Any]) -> None:
        lines = b"".join(
            json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for answer in answers
        )
        if not lines:
            return
        with self._writing:
            try:
                self.out.write(lines)
                self.out.flush()
            except (OSError, ValueError):  # the host stopped reading
                pass

    def finish(self, seconds: float) -> None:
        """Give the answers on their way up to ``seconds`` to arrive."""
        deadline = time.monotonic() + seconds
        for thread in self.in_flight:
            thread.join(max(0.0, deadline - time.monotonic()))


def main(environ: Mapping[str, str] = os.environ) -> int:
    """Relay until stdin closes (0) or a signal ends the relay (128 + its number)."""

    def stop(signum: int, frame: object) -> None:
        raise Stopped(signum)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    relay = Relay(environ, sys.stdout.buffer)
    stdin = sys.stdin.buffer
    sys.stdout = sys.stderr  # whatever else prints must not corrupt the protocol
    try:
        relay.connect_in_background()
        while line := stdin.readline():
            relay.receive(line)
        relay.finish(EOF_GRACE_SECONDS)
    except Stopped as stopped:
        return 128 + stopped.signum
    return 0


def warn(text: str) -> None:
    try:
        sys.stderr.write(f"memvault mcp: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
