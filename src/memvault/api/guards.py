"""ASGI guards in front of every route: the bearer secret and the body size limit.

Plain ASGI rather than Starlette's BaseHTTPMiddleware, which costs a task per request on
the hook path.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PUBLIC_PATHS = frozenset({"/agentmemory/livez", "/docs", "/redoc", "/openapi.json"})


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


class BearerAuth:
    """When a secret is set, every route but livez and the docs needs ``Bearer <secret>``."""

    def __init__(self, app: ASGIApp, secret: str | None) -> None:
        self.app = app
        self.expected = f"Bearer {secret}".encode() if secret else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.expected is None or scope["type"] != "http" or scope["path"] in PUBLIC_PATHS:
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope["headers"]:
            if name == b"authorization":
                given = value
                break
        if not hmac.compare_digest(given, self.expected):
            await send_json(send, 401, {"error": "unauthorized"})
            return
        await self.app(scope, receive, send)


class BodyLimit:
    """Refuse bodies over ``limit`` bytes with 413, whether or not they declare a length."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
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
