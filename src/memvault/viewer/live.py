"""Live updates: a stream of server-sent events saying that events arrived (and in which
sessions) or that the board file changed. The pages' script reloads what they show when
it concerns them; a page works without it, as a page that is reloaded by hand."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from memvault.memory import Memory
from memvault.viewer.render import HEADERS, memory_of

router = APIRouter(include_in_schema=False)
POLL_SECONDS = 0.5
# A stream ends after this long and the browser opens another (after ``retry``), so no
# stream holds up a server that is stopping for longer than this.
STREAM_SECONDS = 15.0
RETRY_MS = 1000
SESSIONS_NAMED = 1000  # events looked at to say which sessions changed


def _board_mark(memory: Memory) -> tuple[int, int, int] | None:
    return memory.board.file_mark()


def _message(name: str, data: dict) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def _changed_sessions(memory: Memory, after: int) -> tuple[int, list[str]]:
    return memory.reads.sessions_changed(after, limit=SESSIONS_NAMED)


async def _stream(memory: Memory) -> AsyncIterator[str]:
    last = await run_in_threadpool(memory.reads.last_event_seq)
    mark = _board_mark(memory)
    yield f"retry: {RETRY_MS}\n" + _message("hello", {"lastSeq": last})
    deadline = time.monotonic() + STREAM_SECONDS
    while time.monotonic() < deadline:
        await asyncio.sleep(POLL_SECONDS)
        seq = await run_in_threadpool(memory.reads.last_event_seq)
        if seq > last:
            seq, sessions = await run_in_threadpool(_changed_sessions, memory, last)
            last = seq
            yield _message("events", {"lastSeq": seq, "sessions": sessions})
        now = _board_mark(memory)
        if now != mark:
            mark = now
            yield _message("board", {})


@router.get("/live")
async def live(request: Request) -> StreamingResponse:
    headers = {**HEADERS, "x-accel-buffering": "no"}
    return StreamingResponse(
        _stream(memory_of(request)), media_type="text/event-stream", headers=headers
    )
