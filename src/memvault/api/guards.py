"""Guards in front of every route: browsers kept out, the bearer secret (and the viewer's
cookie, on the viewer's pages only), the body size limit, text no store can hold (U+0000)
in a path or query, and one way to decode a JSON body.

The first three are plain ASGI rather than Starlette's BaseHTTPMiddleware, which costs a
task per request on the hook path.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, quote

from fastapi import Request, Response
from fastapi.routing import APIRoute

from memvault.ingest.envelope import NUL_REFUSED, parse_json, refuse_nul

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PUBLIC_PATHS = frozenset({"/agentmemory/livez", "/docs", "/redoc", "/openapi.json"})
PUBLIC_PREFIX = "/docs/"  # the docs pages' scripts and styles
# Routes that take a body of any size as a stream, spooled to disk rather than held in
# memory: an archive to import.
STREAMED_UPLOADS = frozenset({"/agentmemory/import/archive"})


class BodyTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"request body is larger than the {limit}-byte limit")
        self.limit = limit


async def send_json(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BrowserGuard:
    """Keep web pages out of a server meant for local tools.

    A page the user visits can send requests to ``127.0.0.1`` (a "simple" cross-site POST
    needs no preflight), and through DNS rebinding it can even read the answers. Hooks,
    the CLI and MCP clients send neither an ``Origin`` header nor a foreign ``Host``. So:
    a request whose ``Origin`` is not this server's own (same host and port as ``Host``)
    is refused with 403, and on a loopback bind a ``Host`` that is not a loopback name is
    refused with 421.
    """

    def __init__(self, app: ASGIApp, loopback: bool) -> None:
        self.app = app
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = origin = None
        for name, value in scope["headers"]:
            if name == b"host":
                host = value.decode("latin-1").strip().lower()
            elif name == b"origin":
                origin = value.decode("latin-1").strip().lower()
        if self.loopback and host is not None and not _loopback_host(host):
            await send_json(send, 421, {"error": f"Host {host!r} is not this machine"})
            return
        if origin is not None and _netloc(origin) != host:
            await send_json(
                send, 403, {"error": f"requests from web pages ({origin}) are not accepted"}
            )
            return
        await self.app(scope, receive, send)


def _netloc(origin: str) -> str | None:
    scheme, _, rest = origin.partition("://")
    return rest.rstrip("/") if scheme in ("http", "https") and rest else None


def _loopback_host(host: str) -> bool:
    """``localhost``, ``127.x.y.z`` or ``[::1]``, with or without a port."""
    name = host[: host.find("]") + 1] if host.startswith("[") else host.rsplit(":", 1)[0]
    if name in ("localhost", "[::1]") or name.endswith(".localhost"):
        return True
    parts = name.split(".")
    return len(parts) == 4 and parts[0] == "127" and all(p.isdigit() for p in parts)


class BearerAuth:
    """When a secret is set, every route but livez and the docs needs ``Bearer <secret>``.

    The viewer's pages (``viewer_pages``) also take the cookie its door leaves (a browser
    cannot send a bearer header with a link it follows); a page asked for without either
    is sent to the door (a feed, ``viewer_feeds``, is answered 401). The door and its
    files (``viewer_open``) are open. The API takes
    the header alone, the cookie never.
    """

    def __init__(
        self,
        app: ASGIApp,
        secret: str | None,
        *,
        viewer_pages: tuple[str, ...] = (),
        viewer_open: tuple[str, ...] = (),
        viewer_feeds: tuple[str, ...] = (),
        login: str = "/login",
        viewer_cookie: Callable[[bytes], bool] | None = None,
    ) -> None:
        self.app = app
        self.expected = f"Bearer {secret}".encode() if secret else None
        # Whether a request's Cookie header opens the viewer's pages (``viewer.login``).
        self.cookie_opens = viewer_cookie if secret else None
        self.viewer_pages = viewer_pages
        self.viewer_open = viewer_open
        self.viewer_feeds = viewer_feeds
        self.login = login

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (
            self.expected is None
            or scope["type"] != "http"
            or _public(path)
            or _under(path, self.viewer_open)
        ):
            await self.app(scope, receive, send)
            return
        given = b""
        cookies = b""
        for name, value in scope["headers"]:
            if name == b"authorization":
                given = value
            elif name == b"cookie":
                cookies = value
        if hmac.compare_digest(given, self.expected):
            await self.app(scope, receive, send)
            return
        page = _under(path, self.viewer_pages)
        if page and self.cookie_opens is not None:
            if self.cookie_opens(cookies):
                await self.app(scope, receive, send)
                return
            if scope.get("method") == "GET" and not _under(path, self.viewer_feeds):
                await _see_other(send, f"{self.login}?next={quote(path)}")
                return
        await send_json(send, 401, {"error": "unauthorized"})


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    """``path`` is one of ``prefixes`` or below one (``/`` only itself)."""
    for prefix in prefixes:
        if path == prefix or (prefix != "/" and path.startswith(prefix + "/")):
            return True
    return False


async def _see_other(send: Send, location: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [(b"location", location.encode()), (b"content-length", b"0")],
        }
    )
    await send({"type": "http.response.body", "body": b""})


def _public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIX)


class BodyLimit:
    """Refuse bodies over ``limit`` bytes with 413, whether or not they declare a length."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in STREAMED_UPLOADS:
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await send_json(send, 400, {"error": "invalid Content-Length header"})
                    return
                if declared > self.limit:
                    await send_json(send, 413, {"error": str(BodyTooLarge(self.limit))})
                    return
                break
        received = 0
        exceeded = False
        answered = False

        async def counting_receive() -> Message:
            nonlocal received, exceeded
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    exceeded = True
                    raise BodyTooLarge(self.limit)
            return message

        async def guarded_send(message: Message) -> None:
            # Routes whose framework parses the body turn our error into a generic 400;
            # once the limit was passed, whatever they answer becomes the 413 it is.
            nonlocal answered
            if not exceeded:
                await send(message)
            elif not answered:
                answered = True
                await send_json(send, 413, {"error": str(BodyTooLarge(self.limit))})

        try:
            await self.app(scope, counting_receive, guarded_send)
        except BodyTooLarge:
            if not answered:
                await send_json(send, 413, {"error": str(BodyTooLarge(self.limit))})


class NulGuard:
    """Refuse a path or query parameter holding U+0000 (``%00``) with a 400 naming it.

    PostgreSQL's text cannot hold the character, and SQLite would store what PostgreSQL
    refuses: so neither engine is asked, and both answer alike (bodies are checked where
    they are decoded, ``DecodedBodyRoute`` and the envelope)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            field = _nul_in_request(scope)
            if field is not None:
                error = {"error": f"{field} {NUL_REFUSED}", "fields": [field]}
                await send_json(send, 400, error)
                return
        await self.app(scope, receive, send)


def _nul_in_request(scope: Scope) -> str | None:
    if "\x00" in scope.get("path", ""):
        return "path"
    query = scope.get("query_string", b"")
    if b"%00" not in query and b"\x00" not in query:
        return None
    for name, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if "\x00" in name or "\x00" in value:
            return name.replace("\x00", "\\0")
    return None


class DecodedBodyRoute(APIRoute):
    """A route whose body FastAPI validates against a model, decoded first as every body
    memvault reads is (``parse_json``).

    So a body that is not UTF-8, is malformed, nests too deep, holds too long a number or a
    lone surrogate gets the 400 that names the problem, as on ``/observe``, rather than
    FastAPI's "There was an error parsing the body" (or a value no later step can take).
    Text holding U+0000 is refused naming its field, as no store can hold it. Routes that
    read their body by hand are left as they are."""

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler

        async def decoded_first(request: Request) -> Response:
            request = _DecodedRequest(request.scope, request.receive)
            if await request.body():  # an empty body is FastAPI's "absent"
                await request.json()  # an ``InvalidInput`` raised here is the app's to answer
            return await handler(request)

        return decoded_first


class _DecodedRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_decoded"):
            decoded = parse_json(await self.body())
            refuse_nul(decoded)
            self._decoded = decoded
        return self._decoded
