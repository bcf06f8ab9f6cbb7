"""The server's MCP endpoint as the relay sees it: one JSON-RPC message in, the messages
the server answers out.

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
from memvault.relay.http import Connection

TYPE_CHECKING = False  # typing is not imported at run time: a host waits for every import
if TYPE_CHECKING:
    from typing import Any

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
REQUEST_SECONDS = 300.0  # a tool may search or write for a while; the host has its own limit
SERVER_UNAVAILABLE = -32000
INTERNAL_ERROR = -32603


class Endpoint:
    """``/mcp`` of the server at ``url``, for one host connection."""

    def __init__(self, url: str, secret: str | None) -> None:
        self.url = url
        self.secret = secret
        self.session_id: str | None = None
        self.protocol_version: str | None = None  # what initialize agreed

    def send(self, message: Any) -> list[Any]:
        """The server's answers to ``message`` (none for a notification).
        ``Unavailable`` when the server cannot be reached."""
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        connection = Connection(self.url, self.secret, time.monotonic() + REQUEST_SECONDS)
        answer = connection.exchange("POST", "/mcp", body, self._headers(message))
        session = answer.header("mcp-session-id")
        if session:
            self.session_id = session
        answers = _messages(answer.body, answer.header("content-type") or "")
        if isinstance(message, dict) and message.get("method") == "initialize":
            for reply in answers:
                result = reply.get("result") if isinstance(reply, dict) else None
                if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                    self.protocol_version = result["protocolVersion"]
        if answers or not expects_answer(message):
            return answers
        return [_http_error(message, answer.status, answer.body)]

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
    """The revision a 2026-07-28-style message names in ``params._meta``, else None."""
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def error(message: Any, code: int, text: str) -> dict[str, Any]:
    """A JSON-RPC error answering ``message``."""
    request_id = message.get("id") if isinstance(message, dict) else None
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}


def expects_answer(message: Any) -> bool:
    """Whether ``message`` is (or a batch holds) a request, which the host awaits an answer to."""
    if isinstance(message, list):
        return any(expects_answer(item) for item in message)
    return isinstance(message, dict) and "method" in message and "id" in message


def _messages(body: bytes, content_type: str) -> list[Any]:
    """The JSON-RPC messages in an answer: a JSON body, or the data of each SSE event."""
    if content_type.split(";")[0].strip().lower() == "text/event-stream":
        found = []
        for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
            data = b"\n".join(
                line[5:].removeprefix(b" ")
                for line in event.split(b"\n")
                if line.startswith(b"data:")
            )
            if data.strip():
                found += _decoded(data)
        return found
    return _decoded(body) if body.strip() else []


def _decoded(data: bytes) -> list[Any]:
    """The JSON-RPC message in ``data``; none for anything else (an HTTP error's body)."""
    try:
        decoded = json.loads(data)
    except ValueError:
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


__all__ = ["Endpoint", "Unavailable", "error", "expects_answer", "modern_version"]
