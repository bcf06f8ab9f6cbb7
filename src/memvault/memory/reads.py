"""Reads: sessions, their events and observations, timelines, what happened lately, and
the event log's progress, as the faces show them."""

from __future__ import annotations

from memvault.domain import Event, Observation, Session, StoreStats
from memvault.errors import InvalidInput
from memvault.memory.reading import (
    Activity,
    IngestRate,
    Timeline,
    project_activity,
    session_activity,
    session_timeline,
)
from memvault.store import Store
from memvault.vault.lifecycle import SessionBoard


class Reads:
    """What memory holds about sessions, read for people and agents."""

    def __init__(self, store: Store, board: SessionBoard, ingest_rate: IngestRate) -> None:
        self.store = store
        self.board = board
        self.ingest_rate = ingest_rate  # events stored per minute, for the viewer's chart

    def session(self, session_id: str) -> Session | None:
        return self.store.get_session(session_id)

    def sessions(
        self, *, limit: int = 100, offset: int = 0, agent_id: str | None = None
    ) -> list[Session]:
        return self.store.list_sessions(limit=limit, offset=offset, agent_id=agent_id)

    def observations(
        self, session_id: str, *, limit: int = 1000, offset: int = 0
    ) -> list[Observation]:
        return self.store.list_observations(session_id, limit=limit, offset=offset)

    def events(self, session_id: str, *, limit: int = 1000, offset: int = 0) -> list[Event]:
        return self.store.list_events(session_id, limit=limit, offset=offset)

    def session_summary(self, session_id: str) -> dict | None:
        stored = self.store.session_summary(session_id)
        return stored[0] if stored else None

    def latest(
        self, *, session_id: str | None = None, project: str | None = None, limit: int = 20
    ) -> Activity | None:
        """What happened lately in a session (a host session id or a Memory Session ID;
        None when it names neither) or in a project: the latest observations, oldest first,
        and the sessions they belong to."""
        if (session_id is None) == (project is None):
            raise InvalidInput("give session_id or project (one of them)")
        if session_id is not None:
            return session_activity(self.store, self.board, session_id, limit)
        assert project is not None
        return project_activity(self.store, self.board, project, limit)

    def timeline(self, session_id: str, *, after: int = 0, limit: int = 200) -> Timeline | None:
        """A page of a session's events with their observations, in arrival order after
        sequence ``after``, its summary, watermarks and board row; None for no session."""
        return session_timeline(self.store, self.board, session_id, after=after, limit=limit)

    def last_event_seq(self) -> int:
        """The sequence number of the latest event stored (0 for none)."""
        return self.store.last_event_seq()

    def sessions_changed(self, after: int, *, limit: int) -> tuple[int, list[str]]:
        """The sessions of the (at most ``limit``) events stored after ``after``, and the
        sequence number of the newest of them: what is stored after it, the next call
        names (``after`` when there is none)."""
        events = self.store.log_after(after, limit=limit)
        last = max((e.seq for e in events), default=after)
        return last, sorted({e.session_id for e in events})

    def stats(self) -> StoreStats:
        """How much the store holds: events, sessions, observations, documents."""
        return self.store.stats()
