"""A server-sent event stream read as it arrives: the data of each event, once the blank
line that ends it is in.

An MCP answer streamed as ``text/event-stream`` carries one JSON-RPC message per event;
comments (the ``: ping`` a server sends to keep an idle stream open) and the other fields
(``event:``, ``id:``, ``retry:``) carry none.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: a host waits for every import
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

LINE_LIMIT = 64 * 1024 * 1024  # one event's data: a tool's answer may be large, not endless


class EventStream:
    """Bytes in (``feed``), each whole event's data out."""

    def __init__(self) -> None:
        self._pending = b""
        self._scanned = 0  # how much of _pending holds no line end
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        """The data of every event that ``chunk`` completes."""
        self._pending += chunk
        while True:
            end = _line_end(self._pending, self._scanned)
            if end is None:
                if len(self._pending) > LINE_LIMIT:
                    raise ValueError("an event stream line longer than the limit")
                self._scanned = max(0, len(self._pending) - 1)
                return
            line, self._pending = _split(self._pending, end)
            self._scanned = 0
            if not line:
                if self._data:
                    yield b"\n".join(self._data)
                self._data = []
            elif line.startswith(b"data:"):
                self._data.append(line[5:].removeprefix(b" "))

    def events(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """The data of each event in ``chunks``, as each one completes."""
        for chunk in chunks:
            yield from self.feed(chunk)


def _line_end(buffer: bytes, start: int) -> int | None:
    """Where the first line ends (CRLF, LF or CR), looking from ``start``; None while it
    may still be coming."""
    cr = buffer.find(b"\r", start)
    lf = buffer.find(b"\n", start)
    if cr < 0 and lf < 0:
        return None
    if cr < 0 or (0 <= lf < cr):
        return lf
    if cr == len(buffer) - 1:
        return None  # a CR at the very end: an LF may follow in the next chunk
    return cr


def _split(buffer: bytes, end: int) -> tuple[bytes, bytes]:
    after = end + 2 if buffer[end : end + 2] == b"\r\n" else end + 1
    return buffer[:end], buffer[after:]
