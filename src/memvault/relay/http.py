"""One HTTP exchange with the memvault server, with the headers MCP needs.

Built on the hook's transport (a plain socket, ``Connection: close``, one deadline for
the whole exchange), which keeps ``http.client`` and its email-package imports out of a
command that a host starts for every editor window. Unlike the hook, the relay sends
headers of its own (the MCP session and protocol version), reads the answer's headers,
and also asks ``GET`` questions (is the server alive).
"""

from __future__ import annotations

import socket

from memvault.hook import transport
from memvault.hook.transport import Unavailable

TYPE_CHECKING = False  # typing is not imported at run time: a host waits for every import
if TYPE_CHECKING:
    from collections.abc import Mapping


class Answer:
    """An HTTP answer: its status, the headers the relay reads, and its body."""

    __slots__ = ("body", "head", "status")

    def __init__(self, status: int, head: bytes, body: bytes) -> None:
        self.status = status
        self.head = head
        self.body = body

    def header(self, name: str) -> str | None:
        value = transport._header(self.head, name.lower().encode("ascii"))
        return value.decode("latin-1") if value is not None else None


class Connection(transport.Server):
    """The server at ``url`` for one exchange, within ``deadline`` (a ``time.monotonic``)."""

    def exchange(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        """Send one request; its answer, whatever the status. ``Unavailable`` when the
        server cannot be reached or does not answer in time."""
        try:
            scheme, host, port, prefix = transport.split_url(self.url)
        except ValueError as exc:
            raise Unavailable(str(exc)) from None
        authority = f"[{host}]" if ":" in host else host
        lines = [f"{method} {prefix}{path} HTTP/1.1", f"Host: {authority}:{port}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        if body or method == "POST":
            lines.append(f"Content-Length: {len(body)}")
        lines.append("Connection: close")
        if self.secret:
            lines.append(f"Authorization: Bearer {self.secret}")
        request = "\r\n".join(lines).encode("latin-1", "replace") + b"\r\n\r\n" + body
        try:
            address = (transport._ascii_or_text(host), port)
            with socket.create_connection(address, timeout=self._left()) as plain:
                if scheme == "https":
                    with transport._tls(plain, host) as secure:
                        raw = self._talk(secure, request)
                else:
                    raw = self._talk(plain, request)
        except OSError as exc:
            raise Unavailable(transport._describe(exc)) from None
        status, content = transport._parse(raw)
        return Answer(status, raw.partition(b"\r\n\r\n")[0], content)
