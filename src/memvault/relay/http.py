"""One HTTP exchange with the memvault server, with the headers MCP needs, read as it arrives.

Built on the hook's transport (a plain socket, ``Connection: close``), which keeps
``http.client`` and its email-package imports out of a command that a host starts for
every editor window. Unlike the hook, the relay sends headers of its own (the MCP session
and protocol version), reads the answer's headers, asks ``GET`` questions (is the server
alive), and reads a body while it is still coming: an MCP answer may be an event stream
that stays open for as long as the host wants it (a ``subscriptions/listen``), so its
events are passed on one by one instead of after the body ends.
"""

from __future__ import annotations

import contextlib
import socket

from memvault.hook import transport
from memvault.hook.transport import Unavailable

TYPE_CHECKING = False  # typing is not imported at run time: a host waits for every import
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from typing import BinaryIO

READ_SIZE = 65536
HEAD_LIMIT = 64 * 1024


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


class Reply(Answer):
    """An answer whose head has arrived and whose body is read as it comes (``chunks``)."""

    __slots__ = ("_file", "_socket")

    def __init__(self, status: int, head: bytes, sock: socket.socket, file: BinaryIO) -> None:
        super().__init__(status, head, b"")
        self._socket = sock
        self._file = file

    def chunks(self, timeout: Callable[[], float]) -> Iterator[bytes]:
        """The body's bytes as they arrive (chunked, fixed-length or up to the close); each
        read may wait ``timeout()`` seconds. ``Unavailable`` when the server goes quiet
        for that long or the body is cut short."""
        try:
            if (self.header("transfer-encoding") or "").lower() == "chunked":
                yield from self._dechunked(timeout)
                return
            length = self.header("content-length")
            left = int(length) if length is not None and length.isdigit() else -1
            while left != 0:
                self._socket.settimeout(timeout())
                data = self._file.read1(READ_SIZE if left < 0 else min(left, READ_SIZE))
                if not data:
                    if left > 0:
                        raise Unavailable("the answer was cut short")
                    return
                left -= len(data) if left > 0 else 0
                yield data
        except OSError as exc:
            raise Unavailable(transport._describe(exc)) from None

    def _dechunked(self, timeout: Callable[[], float]) -> Iterator[bytes]:
        while True:
            self._socket.settimeout(timeout())
            line = self._file.readline(1024)
            if not line.endswith(b"\n"):
                raise Unavailable("the answer was cut short")
            try:
                size = int(line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                raise Unavailable("the answer's chunks were malformed") from None
            if size == 0:
                return
            while size:
                self._socket.settimeout(timeout())
                data = self._file.read1(min(size, READ_SIZE))
                if not data:
                    raise Unavailable("the answer was cut short")
                size -= len(data)
                yield data
            self._file.readline(8)  # the CRLF after the chunk

    def cancel(self) -> None:
        """End the exchange from another thread: the reader sees the body end."""
        with contextlib.suppress(OSError):  # closed already
            self._socket.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._file.close()
        self._socket.close()

    def __enter__(self) -> Reply:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Connection(transport.Server):
    """The server at ``url`` for one exchange; its head (and, for ``exchange``, its whole
    body) within ``deadline`` (a ``time.monotonic``)."""

    def exchange(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        """Send one request; its whole answer, whatever the status. ``Unavailable`` when
        the server cannot be reached or does not answer in time."""
        with self.open(method, path, body, headers) as reply:
            content = b"".join(reply.chunks(self._left))
        return Answer(reply.status, reply.head, content)

    def open(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Send one request and read its answer's head; the body is the caller's to read."""
        try:
            scheme, host, port, prefix = transport.split_url(self.url)
        except ValueError as exc:
            raise Unavailable(str(exc)) from None
        authority = f"[{host}]" if ":" in host else host
        fields = dict(headers or {})
        if body or method == "POST":
            fields["Content-Length"] = str(len(body))
        fields["Connection"] = "close"
        if self.secret:
            fields["Authorization"] = f"Bearer {self.secret}"
        for name, value in fields.items():
            if any(c in "\r\n\0" for c in name + value):  # would end the field, or start one
                raise Unavailable(f"the {name} header would hold a line break")
        lines = [f"{method} {prefix}{path} HTTP/1.1", f"Host: {authority}:{port}"]
        lines += [f"{name}: {value}" for name, value in fields.items()]
        request = "\r\n".join(lines).encode("latin-1", "replace") + b"\r\n\r\n" + body
        sock: socket.socket | None = None
        try:
            address = (transport._ascii_or_text(host), port)
            sock = socket.create_connection(address, timeout=self._left())
            if scheme == "https":
                sock = transport._tls(sock, host)
            sock.sendall(request)
            file = sock.makefile("rb")
            head = self._head(sock, file)
        except OSError as exc:
            if sock is not None:
                sock.close()
            raise Unavailable(transport._describe(exc)) from None
        except Unavailable:
            sock.close()  # type: ignore[union-attr]  # the head was read from it
            raise
        status = head.split(b"\r\n", 1)[0].split()
        return Reply(int(status[1]), head, sock, file)

    def _head(self, sock: socket.socket, file: BinaryIO) -> bytes:
        """The status line and headers, up to the blank line that ends them."""
        lines: list[bytes] = []
        size = 0
        while True:
            sock.settimeout(self._left())
            line = file.readline(HEAD_LIMIT)
            size += len(line)
            if not line.endswith(b"\n") or size > HEAD_LIMIT:
                raise Unavailable("the answer was not HTTP")
            if not line.strip():
                break
            lines.append(line.rstrip(b"\r\n"))
        status = lines[0].split() if lines else []
        if len(status) < 2 or not status[0].startswith(b"HTTP/") or not status[1].isdigit():
            raise Unavailable("the answer was not HTTP")
        return b"\r\n".join(lines)
