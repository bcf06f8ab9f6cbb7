"""Reads that join several parts of a memory: a session's timeline, one page at a time;
what happened lately in a session or a project; and a board row with its snapshot and
what memory gave its session.

The reads part (``memory/reads.py``) composes these for the viewer, the REST API and the
MCP tools.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from memvault.domain import BoardRow, Event, Observation, Session
from memvault.store import Store
from memvault.vault.board import SESSION_ID, Board
from memvault.vault.board_files import BoardError
from memvault.vault.lifecycle import SessionBoard
from memvault.vault.snapshot import CONTINUES, Snapshot

# The hook type of memvault's record, in a session, of a memory block it gave the agent.
INJECTION_HOOK = "context_injected"
TIMELINE_PAGE = 200  # events a timeline page holds unless asked for fewer
MAX_TIMELINE_PAGE = 1000
# A board row lists the memory given to its session among this many of its latest events:
# a bounded read however long the session (its timeline shows every one).
INJECTIONS_SCANNED = 5000
ALL_EVENTS = 100_000  # what "all of them" reads at most

# What an entry of a timeline is, from its hook type (and its observation's type).
_KINDS = {
    "prompt_submit": "prompt",
    "assistant_response": "response",
    "stop": "response",
    "pre_tool_use": "tool",
    "post_tool_use": "tool",
    "post_tool_failure": "failure",
    INJECTION_HOOK: "injection",
    "session_start": "session",
    "session_end": "session",
}


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One event of a session and the observation derived from it."""

    event: Event
    observation: Observation | None

    @property
    def kind(self) -> str:
        """prompt, response, tool, failure, injection, session or other."""
        if self.observation is not None and self.observation.type == "error":
            return "failure"
        return _KINDS.get(self.event.hook_type, "other")


@dataclass(frozen=True, slots=True)
class Timeline:
    """A page of a session's events in arrival order, after sequence ``after``."""

    session: Session
    board_row: BoardRow | None  # the row the session feeds, when it is on the board
    summary: dict[str, Any] | None
    entries: list[TimelineEntry]
    after: int  # the cursor this page starts after (0: the first page)
    next_after: int | None  # the cursor of the next page; None when this is the last


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """A board row with its snapshot, read from the vault as it is now."""

    row: BoardRow
    snapshot_text: str | None
    snapshot: Snapshot | None
    continues_from: list[str]  # the rows its snapshot's Continues From names
    host_session_id: str | None  # the host session tied to the row, if any
    injections: list[dict[str, Any]]  # what memory gave that session, oldest first
    injections_complete: bool = True  # False: only the latest INJECTIONS_SCANNED were read
    unreadable: str | None = None  # why the snapshot could not be read


def session_timeline(
    store: Store,
    board: SessionBoard,
    session_id: str,
    *,
    after: int = 0,
    limit: int = TIMELINE_PAGE,
) -> Timeline | None:
    """A page of the session ``session_id`` names (a host session id, or the Memory
    Session ID of its board row); None when it names none. Paged by sequence number, so a
    page costs the same in a session of ten events or of a hundred thousand."""
    limit = max(1, min(limit, MAX_TIMELINE_PAGE))
    session = store.get_session(session_id)
    if session is None:
        link = store.board_links().get(session_id)
        session = store.get_session(link[0]) if link else None
    if session is None:
        return None
    events = store.events_after(session.id, max(after, 0), limit=limit + 1)
    more = len(events) > limit
    events = events[:limit]
    observed = {o.event_seq: o for o in store.observations_of([e.seq for e in events])}
    row = None
    if session.board_session_id:
        try:
            row = board.board().get(session.board_session_id)
        except ValueError:  # a board memvault will not read: the timeline still shows
            row = None
    stored = store.session_summary(session.id)
    return Timeline(
        session=session,
        board_row=row,
        summary=stored[0] if stored else None,
        entries=[TimelineEntry(e, observed.get(e.seq)) for e in events],
        after=max(after, 0),
        next_after=events[-1].seq if more and events else None,
    )


def board_entry(
    store: Store, board: SessionBoard, session_id: str, *, scan: int | None = INJECTIONS_SCANNED
) -> BoardEntry | None:
    """The row ``session_id`` names with its snapshot; None when it is not on the board.
    The memory given to its session is looked for among its latest ``scan`` events (None:
    all of them)."""
    row = board.board().get(session_id)
    if row is None:
        return None
    link = store.board_links().get(session_id)
    host = link[0] if link else None
    given, complete = recent_injections(store, host, scan=scan) if host else ([], True)
    try:
        text = board.snapshot_text(session_id)
    except BoardError as exc:  # a hand-edited row whose id names no snapshot file
        return BoardEntry(row, None, None, [], host, given, complete, str(exc))
    snapshot = Snapshot.parse(text) if text is not None else None
    sources: list[str] = []
    if snapshot is not None:
        for item in snapshot.items(CONTINUES):
            sources += [m.group(0) for m in SESSION_ID.finditer(item)]
    return BoardEntry(row, text, snapshot, list(dict.fromkeys(sources)), host, given, complete)


def recent_injections(
    store: Store, session_id: str, *, scan: int | None = INJECTIONS_SCANNED
) -> tuple[list[dict[str, Any]], bool]:
    """The memory blocks given to a host session among its latest ``scan`` events (None:
    all of them), oldest first (when, the host event answered, the memories, the tokens),
    and whether that was all of the session."""
    session = store.get_session(session_id)
    if session is None:
        return [], True
    if scan is None:
        events = store.list_events(session_id, limit=ALL_EVENTS)
        scan = ALL_EVENTS
    else:
        events = store.events_before(session_id, store.last_event_seq(), limit=scan)
    found = []
    for event in events:
        if event.hook_type == INJECTION_HOOK and isinstance(event.payload, dict):
            items = [
                i
                for i in event.payload.get("items") or []
                if isinstance(i, dict) and i.get("kind") != "report"
            ]
            found.append(
                {
                    "at": event.occurred_at,
                    "sessionId": session_id,
                    "answered": event.payload.get("answered"),
                    "items": items,
                    "tokens": event.payload.get("tokens"),
                }
            )
    return found, session.event_count <= scan


# What happened lately in a project: looked for among this many of the most recently
# active sessions, with observations read from at most this many of the project's.
SESSION_SCAN = 500
SESSIONS_READ = 20


@dataclass(frozen=True, slots=True)
class Activity:
    """What happened lately: the sessions read (each with its board row's id, if any) and
    their latest observations, oldest first; ``earlier`` when there were more."""

    board: Board  # the board as it was read, for the rows the sessions feed
    sessions: list[tuple[Session | None, str | None]]
    observations: list[Observation]
    earlier: bool


def session_activity(
    store: Store, board: SessionBoard, session_id: str, limit: int
) -> Activity | None:
    """The latest ``limit`` observations of the session ``session_id`` names (a host
    session id or a Memory Session ID); None when it names neither."""
    rows = board.board()
    session = store.get_session(session_id)
    board_id = session.board_session_id if session is not None else None
    if session is None:
        link = store.board_links().get(session_id)
        session = store.get_session(link[0]) if link else None
        board_id = session_id if session is not None or rows.get(session_id) else None
    if session is None and board_id is None:
        return None
    observations = _latest(store, session, limit) if session is not None else []
    earlier = session is not None and session.observation_count > len(observations)
    return Activity(rows, [(session, board_id)], observations, earlier)


def project_activity(store: Store, board: SessionBoard, project: str, limit: int) -> Activity:
    """The latest ``limit`` observations across the project's most recent sessions."""
    rows = board.board()
    candidates = [s for s in store.list_sessions(limit=SESSION_SCAN) if s.project == project]
    candidates.sort(key=lambda s: s.last_event_at or "", reverse=True)
    kept: list[Observation] = []
    read: list[Session] = []
    for session in candidates[:SESSIONS_READ]:
        if len(kept) >= limit and (session.last_event_at or "") < kept[0].occurred_at:
            break  # this session and the older ones ended before the oldest one kept
        read.append(session)
        kept = sorted([*kept, *_latest(store, session, limit)], key=_when)[-limit:]
    shown = {o.session_id for o in kept}
    sessions = [(s, s.board_session_id) for s in read if s.id in shown]
    earlier = sum(s.observation_count for s in candidates) > len(kept)
    return Activity(rows, sessions, kept, earlier)


def _latest(store: Store, session: Session, limit: int) -> list[Observation]:
    offset = max(0, session.observation_count - limit)
    return store.list_observations(session.id, limit=limit, offset=offset)


def _when(observation: Observation) -> tuple[str, int]:
    return observation.occurred_at, observation.event_seq


class IngestRate:
    """Events stored per minute over the last hour, counted as they are acknowledged: what
    the viewer's health chart draws. In memory only, so it starts empty with the server."""

    MINUTES = 60

    def __init__(self, clock: Any = time.time) -> None:
        self._clock = clock
        self._counts: dict[int, int] = {}
        self._lock = threading.Lock()
        self.since = clock()

    def add(self, events: int) -> None:
        if events <= 0:
            return
        minute = int(self._clock() // 60)
        with self._lock:
            self._counts[minute] = self._counts.get(minute, 0) + events
            if len(self._counts) > self.MINUTES + 5:
                for old in [m for m in self._counts if m <= minute - self.MINUTES]:
                    del self._counts[old]

    def last_hour(self) -> list[int]:
        """Events in each of the last 60 minutes, oldest first, this minute last."""
        now = int(self._clock() // 60)
        with self._lock:
            return [self._counts.get(m, 0) for m in range(now - self.MINUTES + 1, now + 1)]
