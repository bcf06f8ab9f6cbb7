"""Live updates: a stream of server-sent events saying that events arrived (and in which
sessions) or that the board file changed. The pages' script reloads what they show when
it concerns them; a page works without it, as a page that is reloaded by hand.

Nothing that changes between two looks is lost. A page carries what it was rendered after
(``data-seen``: the newest event and the board file's mark) and opens the stream from
there (``?seen=``); every message carries the same as its id, which the browser sends back
when it opens the stream again (``Last-Event-ID``). A stream opened from an earlier mark
says at once what changed since."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from typing import Annotated, NamedTuple

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from memvault.errors import InvalidInput
from memvault.memory import Memory
from memvault.viewer.render import HEADERS, memory_of

router = APIRouter(include_in_schema=False)
POLL_SECONDS = 0.5
# A stream ends after this long and the browser opens another (after ``retry``), so no
# stream holds up a server that is stopping for longer than this.
STREAM_SECONDS = 15.0
RETRY_MS = 1000
SESSIONS_NAMED = 1000  # events looked at to say which sessions changed


def _board_mark(memory: Memory) -> str:
    mark = memory.board.file_mark()
    return "-".join(str(part) for part in mark) if mark is not None else "none"


class Seen(NamedTuple):
    """What a page or a stream has told of: the newest event, the board file's mark."""

    seq: int
    board: str

    def text(self) -> str:
        return f"{self.seq}/{self.board}"


_SEEN = re.compile(r"^(\d{1,19})/([\w-]{1,80})$")


def seen_now(memory: Memory) -> Seen:
    """The mark a page rendered now carries: read before its content, so what lands while
    it is rendered is told again rather than lost."""
    return Seen(memory.reads.last_event_seq(), _board_mark(memory))


def mark_seen(request: Request) -> None:
    """A dependency of every page: its mark, read before the page reads what it shows."""
    request.state.seen = seen_now(memory_of(request)).text()


def _parsed(text: str | None) -> Seen | None:
    match = _SEEN.match((text or "").strip())
    return Seen(int(match[1]), match[2]) if match else None


def _message(name: str, data: dict, seen: Seen) -> str:
    return f"id: {seen.text()}\nevent: {name}\ndata: {json.dumps(data)}\n\n"


def _changed_sessions(memory: Memory, after: int) -> tuple[int, list[str]]:
    return memory.reads.sessions_changed(after, limit=SESSIONS_NAMED)


async def _stream(memory: Memory, since: Seen | None) -> AsyncIterator[str]:
    newest = await run_in_threadpool(memory.reads.last_event_seq)
    board = _board_mark(memory)
    # From where the page or the last stream left off; a mark past the newest event (a
    # store emptied since) or none at all starts from now.
    last = newest if since is None or since.seq > newest else since.seq
    told = board if since is None else since.board
    yield f"retry: {RETRY_MS}\n" + _message("hello", {"lastSeq": last}, Seen(last, told))
    deadline = time.monotonic() + STREAM_SECONDS
    while True:
        if newest > last:
            seq, sessions = await run_in_threadpool(_changed_sessions, memory, last)
            if seq > last:
                last = seq
                data = {"lastSeq": last, "sessions": sessions}
                yield _message("events", data, Seen(last, told))
        if board != told:
            told = board
            yield _message("board", {}, Seen(last, told))
        if time.monotonic() >= deadline:
            return
        await asyncio.sleep(POLL_SECONDS)
        newest = await run_in_threadpool(memory.reads.last_event_seq)
        board = _board_mark(memory)


@router.get("/live")
async def live(
    request: Request,
    seen: Annotated[
        str | None,
        Query(description="what the page was rendered after: its data-seen", max_length=120),
    ] = None,
) -> StreamingResponse:
    """The stream, from what the page was rendered after (``seen``), or from where the
    browser's last stream left off when it opens one again (its ``Last-Event-ID``). A
    ``seen`` that is not a page's mark is refused, not taken for "now"."""
    since = _parsed(request.headers.get("last-event-id"))
    if since is None and seen is not None:
        since = _parsed(seen)
        if since is None:
            raise InvalidInput(
                "seen must be a page's data-seen mark: <event seq>/<board mark>",
                fields=["seen"],
            )
    headers = {**HEADERS, "x-accel-buffering": "no"}
    return StreamingResponse(
        _stream(memory_of(request), since), media_type="text/event-stream", headers=headers
    )
