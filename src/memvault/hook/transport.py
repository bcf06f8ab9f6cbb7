"""A small HTTP client for the hook: one JSON POST per connection, bounded by a deadline.

``http.client`` would cost every hook invocation about 40 ms of imports (it loads the email
package to parse headers), more than the rest of the hook's work together. The hook needs
little of HTTP: it sends a request with ``Connection: close`` over a plain socket (TLS when
the URL says https), reads the answer until it is complete or the server closes, and
understands fixed-length and chunked bodies. Every socket operation gets what is left of
one deadline, so a slow or silent server costs the hook that long and no longer.
"""

from __future__ import annotations

import json
import socket
import time

_HEADER_END = b"\r\n\r\n"
# A 4xx answer says the request itself is wrong (malformed, too large, a bad field):
# sending it again cannot help. But for these: a server that timed out reading it (408) or
# asks to come back later (429); an answer from something that is not memvault's
# /agentmemory (404, 405: another program on the port, a proxy, a wrong MEMVAULT_URL — the
# event is fine, and this home's server drains the spool); and one that did not accept the
# secret (401, 403: the spool's drain needs no secret). Every other failure is worth
# keeping the event for.
LATER = frozenset({404, 405, 408, 429})
UNAUTHORIZED = frozenset({401, 403})


def refusal(status: int) -> bool:
    """Whether an answer with ``status`` refuses the request itself."""
    return 400 <= status < 500 and status not in LATER and status not in UNAUTHORIZED


class Unavailable(Exception):
    """The server did not take the request: unreachable, too slow, a transient error, or
    not this client. Worth keeping the event for later."""


class Unauthorized(Unavailable):
    """The server did not accept the secret (401, 403): usually an editor started from the
    desktop, without the secret in its environment. The server's spool drain needs none."""


class Refused(Exception):
    """The server answered that the request is wrong; sending it again will not help."""


class Server:
    """The memvault server at ``url``, asked within ``deadline`` (a ``time.monotonic``)."""

    def __init__(self, url: str, secret: str | None, deadline: float) -> None:
        self.url = url
        self.secret = secret
        self.deadline = deadline
        self.last_head = b""  # the last answer's status line and headers

    def header(self, name: str) -> str | None:
        """A header of the last answer, as text (``%``-escapes decoded)."""
        value = _header(self.last_head, name.lower().encode("ascii"))
        if value is None:
            return None
        from urllib.parse import unquote  # only when a caller asks for a header

        return unquote(value.decode("latin-1"))

    def post(self, path: str, body: bytes) -> dict[str, object]:
        """POST a JSON body; the answer's JSON object (empty when it has none)."""
        status, answer = self._exchange(path, body)
        if 200 <= status < 300:
            try:
                decoded = json.loads(answer) if answer.strip() else {}
            except ValueError:
                decoded = {}
            return decoded if isinstance(decoded, dict) else {}
        reason = f"HTTP {status}: {_error_text(answer)}"
        if refusal(status):
            raise Refused(reason)
        if status in UNAUTHORIZED:
            raise Unauthorized(reason)
        raise Unavailable(reason)

    def _exchange(self, path: str, body: bytes) -> tuple[int, bytes]:
        try:
            scheme, host, port, prefix = split_url(self.url)
        except ValueError as exc:
            raise Unavailable(str(exc)) from None
        authority = f"[{host}]" if ":" in host else host
        head = (
            f"POST {prefix}{path} HTTP/1.1\r\nHost: {authority}:{port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n"
        )
        if self.secret:
            head += f"Authorization: Bearer {self.secret}\r\n"
        request = head.encode("latin-1", "replace") + b"\r\n" + body
        try:
            address = (_ascii_or_text(host), port)
            with socket.create_connection(address, timeout=self._left()) as plain:
                if scheme == "https":
                    with _tls(plain, host) as secure:
                        raw = self._talk(secure, request)
                else:
                    raw = self._talk(plain, request)
        except OSError as exc:
            raise Unavailable(_describe(exc)) from None
        self.last_head = raw.partition(_HEADER_END)[0]
        return _parse(raw)

    def _talk(self, sock: socket.socket, request: bytes) -> bytes:
        sock.settimeout(self._left())
        sock.sendall(request)
        received = bytearray()
        while not _complete(received):
            sock.settimeout(self._left())
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        return bytes(received)

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Unavailable("no answer in time")
        return left


def split_url(url: str) -> tuple[str, str, int, str]:
    """``http://host:port/prefix`` → (scheme, host, port, path prefix without a trailing /)."""
    scheme, separator, rest = url.strip().partition("://")
    scheme = scheme.lower()
    if not separator or scheme not in ("http", "https"):
        raise ValueError(f"the server URL {url!r} is not an http:// or https:// URL")
    authority, _, path = rest.partition("/")
    authority = authority.rpartition("@")[2]
    if authority.startswith("["):
        host, _, port = authority[1:].partition("]")
        port = port.removeprefix(":")
    else:
        host, _, port = authority.partition(":")
    if not host:
        raise ValueError(f"the server URL {url!r} names no host")
    try:
        number = int(port) if port else (443 if scheme == "https" else 80)
    except ValueError:
        raise ValueError(f"the server URL {url!r} has a bad port") from None
    prefix = "/" + path.strip("/") if path.strip("/") else ""
    return scheme, host, number, prefix


def _ascii_or_text(host: str) -> bytes | str:
    """A plain host name as bytes: a str makes the resolver load the IDNA codec first."""
    return host.encode("ascii") if host.isascii() else host


def _tls(sock: socket.socket, host: str) -> socket.socket:
    import ssl  # only for an https server: a second or two of imports otherwise wasted

    return ssl.create_default_context().wrap_socket(sock, server_hostname=host)


def _complete(received: bytearray) -> bool:
    """Whether a whole fixed-length answer is in; otherwise read on until the server closes."""
    end = received.find(_HEADER_END)
    if end < 0:
        return False
    length = _header(bytes(received[:end]), b"content-length")
    return length is not None and length.isdigit() and len(received) - end - 4 >= int(length)


def _parse(raw: bytes) -> tuple[int, bytes]:
    head, separator, body = raw.partition(_HEADER_END)
    status_line = head.split(b"\r\n", 1)[0].split()
    if not separator or len(status_line) < 2 or not status_line[1].isdigit():
        raise Unavailable("the answer was not HTTP")
    if (_header(head, b"transfer-encoding") or b"").lower() == b"chunked":
        try:
            body = _dechunk(body)
        except ValueError:
            raise Unavailable("the answer's chunks were malformed") from None
    else:
        length = _header(head, b"content-length")
        if length is not None and length.isdigit():
            if len(body) < int(length):
                raise Unavailable("the answer was cut short")
            body = body[: int(length)]
    return int(status_line[1]), body


def _header(head: bytes, name: bytes) -> bytes | None:
    for line in head.split(b"\r\n")[1:]:
        key, separator, value = line.partition(b":")
        if separator and key.strip().lower() == name:
            return value.strip()
    return None


def _dechunk(body: bytes) -> bytes:
    out = bytearray()
    position = 0
    while True:
        line_end = body.find(b"\r\n", position)
        if line_end < 0:
            raise Unavailable("the answer was cut short")
        size = int(body[position:line_end].split(b";")[0] or b"0", 16)
        if size == 0:
            return bytes(out)
        start = line_end + 2
        if len(body) < start + size:
            raise Unavailable("the answer was cut short")
        out += body[start : start + size]
        position = start + size + 2


def _error_text(answer: bytes) -> str:
    try:
        error = json.loads(answer).get("error")
    except (ValueError, AttributeError):
        error = None
    text = error if isinstance(error, str) else answer.decode("utf-8", "replace")
    return " ".join(text.split())[:300] or "no detail"


def _describe(exc: OSError) -> str:
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    return exc.strerror or type(exc).__name__
