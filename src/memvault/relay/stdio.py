"""The relay's stdio side: newline-delimited JSON-RPC from the host, each message relayed
on a thread of its own (a slow tool call or a stream held open does not hold up the
others), every message the server answers with written back as it arrives, one whole line
at a time.

A request's answer may be a stream the server keeps open for as long as the host wants it
(``subscriptions/listen``: an acknowledgement at once, then notifications); the host ends
it with ``notifications/cancelled`` naming the request, which closes the stream.

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
    INTERNAL_ERROR,
    SERVER_UNAVAILABLE,
    Endpoint,
    Refused,
    Unavailable,
    error,
    expects_answer,
)

TYPE_CHECKING = False  # typing is not imported at run time: a host waits for every import
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, BinaryIO

    from memvault.relay.http import Reply

PARSE_ERROR = -32700
INVALID_PARAMS = -32602
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
        self.refused_other = False  # said once on stderr; every request still says it
        self._connecting = threading.Lock()
        self._writing = threading.Lock()
        self.in_flight: list[threading.Thread] = []
        self._requests = threading.Lock()
        # The requests in flight by id, each with its exchange once that has begun.
        self._open: dict[str, Reply | None] = {}
        self._cancelled: set[str] = set()

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
        except RecursionError:  # deeper than Python's parser goes: no message of MCP's
            self.write([error(None, PARSE_ERROR, "the line is not JSON (nested too deeply)")])
            return
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict) and "requestId" in params:
                self.cancel(params["requestId"])
        key = _request_key(message)
        if key is not None:
            with self._requests:
                self._open[key] = None
        thread = threading.Thread(target=self.relay, args=(message,), daemon=True)
        thread.start()
        self.in_flight = [t for t in self.in_flight if t.is_alive()] + [thread]

    def relay(self, message: Any) -> None:
        key = _request_key(message)
        answering = expects_answer(message)

        def deliver(answer: Any) -> None:
            # A notification's answers are the server's business: the host expects none;
            # nor does it expect any for a request it cancelled.
            if answering and key not in self._cancelled:
                self.write([answer])

        def opened(reply: Reply) -> None:
            if key is not None:
                with self._requests:
                    self._open[key] = reply
                    if key in self._cancelled:
                        reply.cancel()  # cancelled before its answer began

        try:
            self.connect()
            self.endpoint.send(message, deliver, opened)
        except Refused as exc:
            warn(str(exc))
            deliver(error(message, INVALID_PARAMS, str(exc)))
        except server_process.OtherMemory as exc:
            # Refused, not relayed: the host's tools must not write into another vault.
            if not self.refused_other:
                self.refused_other = True
                warn(str(exc))
            deliver(error(message, SERVER_UNAVAILABLE, f"refused: {exc}"))
        except server_process.StartFailed as exc:
            warn(str(exc))
            deliver(error(message, SERVER_UNAVAILABLE, f"no memvault server: {exc}"))
        except Unavailable as exc:
            if key is None or key not in self._cancelled:
                self.connected = False
                text = (
                    f"the memvault server at {self.endpoint.url} did not answer ({exc}); "
                    "the next request looks for it again"
                )
                warn(text)
                deliver(error(message, SERVER_UNAVAILABLE, text))
        except Exception as exc:  # whatever went wrong, the host is not left waiting
            text = f"the relay could not pass the message on ({type(exc).__name__}: {exc})"
            warn(text)
            deliver(error(message, INTERNAL_ERROR, text))
        finally:
            if key is not None:
                with self._requests:
                    self._open.pop(key, None)
                    self._cancelled.discard(key)

    def cancel(self, request_id: Any) -> None:
        """End the exchange of the request ``request_id`` (its stream, if it is one)."""
        key = _request_key({"id": request_id, "method": ""})
        if key is None:
            return
        with self._requests:
            if key not in self._open:
                return  # answered already, or never asked
            self._cancelled.add(key)
            reply = self._open[key]
        if reply is not None:
            reply.cancel()

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


def _request_key(message: Any) -> str | None:
    """A request's id as a key (``1`` and ``"1"`` apart); None for anything else."""
    if not expects_answer(message) or isinstance(message, list):
        return None
    request_id = message["id"]
    if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
        return None
    return json.dumps(request_id)


def warn(text: str) -> None:
    try:
        sys.stderr.write(f"memvault mcp: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
