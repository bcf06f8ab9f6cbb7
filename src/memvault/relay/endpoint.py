"""The server's MCP endpoint as the relay sees it: one JSON-RPC message in, the messages
the server answers out, each as it arrives.

The endpoint is stateless and serves every protocol revision at once; the relay tells it
which one each message speaks, as an HTTP client would. A 2026-07-28 message carries its
revision in ``params._meta`` and goes with the routing headers that revision asks for
(``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``); an earlier one goes with the
revision its ``initialize`` agreed. Nothing ties the relay to the first message's
revision, so a ``server/discover`` probe followed by ``initialize`` gets both answered.
"""

from __future__ import annotations

import json
import time

from memvault.hook.transport import Unavailable
from memvault.relay.event_stream import EventStream
from memvault.relay.http import Connection

TYPE_CHECKING = False  # typing is not imported at run time: a host waits for every import
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from memvault.relay.http import Reply

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# A tool may search or write for a while, and the host has its own limit; a stream the
# server keeps open sends a ping at least every 15 s, so this long a silence means it is gone.
REQUEST_SECONDS = 300.0
VERSION_LIMIT = 32
VERSION_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
SERVER_UNAVAILABLE = -32000
INTERNAL_ERROR = -32603


class Refused(Exception):
    """A message the relay will not send on: it names a protocol version that is no
    protocol version (which would otherwise reach an HTTP header as it is)."""


class Endpoint:
    """``/mcp`` of the server at ``url``, for one host connection."""

    def __init__(self, url: str, secret: str | None) -> None:
        self.url = url
        self.secret = secret
        self.session_id: str | None = None
        self.protocol_version: str | None = None  # what initialize agreed

    def send(
        self,
        message: Any,
        deliver: Callable[[Any], None],
        opened: Callable[[Reply], None] | None = None,
    ) -> None:
        """Send ``message`` and ``deliver`` each message the server answers with as it
        arrives (none for a notification): a streamed answer's events one by one, for as
        long as the server keeps the stream open. ``opened`` gets the exchange once its
        head is in, so that another thread can end it (``Reply.cancel``). ``Unavailable``
        when the server cannot be reached; ``Refused`` for a message not to be sent."""
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        connection = Connection(self.url, self.secret, time.monotonic() + REQUEST_SECONDS)
        answered = False
        with connection.open("POST", "/mcp", body, self._headers(message)) as reply:
            if opened is not None:
                opened(reply)
            session = reply.header("mcp-session-id")
            if session and _is_session_id(session):
                self.session_id = session
            kind = (reply.header("content-type") or "").split(";")[0].strip().lower()
            chunks = reply.chunks(lambda: REQUEST_SECONDS)  # quiet that long: gone
            if kind == "text/event-stream":
                found: Iterable[bytes] = EventStream().events(chunks)
                content = b""
            else:
                content = b"".join(chunks)
                found = [content] if content.strip() else []
            for data in found:
                for answer in _decoded(data):
                    self._agreed(message, answer)
                    # A notification or request on the stream does not answer; a result does.
                    response = isinstance(answer, list) or (
                        "id" in answer and "method" not in answer
                    )
                    answered = answered or response
                    deliver(answer)
        if answered or not expects_answer(message):
            return
        if kind == "text/event-stream" and reply.status == 200:
            ended = "the memvault server ended the stream without answering the request"
            deliver(error(message, SERVER_UNAVAILABLE, ended))
        else:
            deliver(_http_error(message, reply.status, content))

    def _agreed(self, message: Any, answer: Any) -> None:
        """Keep the revision an ``initialize`` answer agrees, for the requests after it."""
        if not (isinstance(message, dict) and message.get("method") == "initialize"):
            return
        result = answer.get("result") if isinstance(answer, dict) else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str) and is_protocol_version(version):
            self.protocol_version = version

    def _headers(self, message: Any) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        version = modern_version(message)
        if version is not None:
            headers["MCP-Protocol-Version"] = version
            headers["Mcp-Method"] = _header_value(str(message.get("method", "")))
            key = NAMED.get(message.get("method"))
            name = message.get("params", {}).get(key) if key else None
            if isinstance(name, str):
                headers["Mcp-Name"] = _header_value(name)
            return headers
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        initializing = isinstance(message, dict) and message.get("method") == "initialize"
        if self.protocol_version and not initializing:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers


def modern_version(message: Any) -> str | None:
    """The revision a 2026-07-28-style message names in ``params._meta``, else None.
    ``Refused`` when it names something that is not a protocol version."""
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or VERSION_KEY not in meta:
        return None
    version = meta[VERSION_KEY]
    if not (isinstance(version, str) and is_protocol_version(version)):
        shown = json.dumps(version, ensure_ascii=True)[:80]
        raise Refused(
            f"params._meta[{VERSION_KEY!r}] is {shown}, which is not a protocol version "
            "(a short token of letters, digits, '.', '_' and '-', such as 2026-07-28)"
        )
    return version


def is_protocol_version(value: str) -> bool:
    """Whether ``value`` is shaped like an MCP protocol revision (``2025-06-18``, or a
    draft's name): a short token, safe to send as an HTTP header as it is."""
    return 0 < len(value) <= VERSION_LIMIT and all(c in VERSION_CHARACTERS for c in value)


def error(message: Any, code: int, text: str) -> dict[str, Any]:
    """A JSON-RPC error answering ``message``."""
    request_id = message.get("id") if isinstance(message, dict) else None
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}


def expects_answer(message: Any) -> bool:
    """Whether ``message`` is (or a batch holds) a request, which the host awaits an answer to."""
    if isinstance(message, list):
        return any(expects_answer(item) for item in message)
    return isinstance(message, dict) and "method" in message and "id" in message


def _is_session_id(value: str) -> bool:
    """Whether ``value`` is a session id as MCP defines one: visible ASCII only."""
    return all("!" <= c <= "~" for c in value)


def _decoded(data: bytes) -> list[Any]:
    """The JSON-RPC message in ``data``; none for anything else (an HTTP error's body)."""
    try:
        decoded = json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python goes
        return []
    if isinstance(decoded, dict) and decoded.get("jsonrpc") == "2.0":
        return [decoded]
    if isinstance(decoded, list) and decoded and all(isinstance(m, dict) for m in decoded):
        return [decoded]
    return []


def _http_error(message: Any, status: int, body: bytes) -> dict[str, Any]:
    detail = " ".join(body.decode("utf-8", "replace").split())[:300] or "no detail"
    if status in (401, 403):
        return error(
            message,
            SERVER_UNAVAILABLE,
            f"the memvault server refused the secret (HTTP {status}): set MEMVAULT_SECRET "
            "in this MCP server's environment to the server's secret",
        )
    return error(message, INTERNAL_ERROR, f"the memvault server answered HTTP {status}: {detail}")


def _header_value(value: str) -> str:
    """A value as an HTTP header carries it: printable ASCII as it is, anything else in
    MCP's ``=?base64?…?=`` form."""
    plain = value.isascii() and value.isprintable() and value == value.strip()
    if plain and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    import base64  # rarely needed: a tool name is plain ASCII

    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


__all__ = [
    "Endpoint",
    "Refused",
    "Unavailable",
    "error",
    "expects_answer",
    "is_protocol_version",
    "modern_version",
]
