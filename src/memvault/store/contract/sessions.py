"""The sessions part: host sessions and the watermarks of the processes reading them.

Creating a session is written here once for both engines; each engine says how a session
is inserted (``_create_session``, in its ``sessions`` module) and the rest of the part's
reads and watermark moves are in ``store.session_rows``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from memvault.domain import Session, Watermark, iso, utc_now
from memvault.store.engine import Engine


class Sessions(Engine, ABC):
    """Host sessions, created lazily by the log, and the watermarks that say how far each
    derived process has read a session."""

    @abstractmethod
    def _create_session(self, conn, values: tuple) -> bool:
        """Insert the session of ``values`` (id, project, cwd, agent id, title, created,
        updated, last received), or update the title of the one there; whether it is new."""

    def ensure_session(
        self,
        session_id: str,
        *,
        project: str,
        cwd: str,
        agent_id: str | None = None,
        title: str | None = None,
    ) -> Session:
        """Create the session if it does not exist (agent id honoured only then)."""
        now = iso(utc_now())
        values = (session_id, project, cwd, agent_id, title, now, now, now)
        counted = self._sql("UPDATE counters SET value = value + 1 WHERE name = 'sessions'")

        def op(conn) -> None:
            if self._create_session(conn, values):
                conn.execute(counted)

        self._writing(op)
        session = self.get_session(session_id)
        assert session is not None
        return session

    @abstractmethod
    def get_session(self, session_id: str) -> Session | None: ...

    @abstractmethod
    def list_sessions(
        self, *, limit: int, offset: int = 0, agent_id: str | None = None
    ) -> list[Session]:
        """Most recently active first."""

    @abstractmethod
    def record_injected(
        self, session_id: str, items: Sequence[tuple[str, str]], at: str, *, asked: bool
    ) -> None:
        """Note that ``session_id`` was given each ``(kind, id)`` (waits for the commit: the
        session's next block must not give them again), by a block that answered a request
        (``asked``) or by one without a request (a session start's); an item once given by
        an asked block stays so."""

    @abstractmethod
    def forget_injected(self, session_id: str, *, through: str) -> None:
        """Forget what ``session_id`` was given up to ``through`` (its agent's context lost
        it then): its next blocks may give it again. What was given later stays, and so do
        the session's ``context_injected`` events."""

    @abstractmethod
    def injected(self, session_id: str) -> dict[tuple[str, str], bool]:
        """Every ``(kind, id)`` ``session_id`` was given so far, and whether a block that
        answered a request gave it."""

    @abstractmethod
    def advance_extraction(self, session_id: str, through: Watermark) -> bool:
        """Move the fragment-extraction watermark forward (never back); whether it moved."""

    @abstractmethod
    def sessions_to_summarize(
        self, *, threshold: int, idle_before: str, retry_before: str, limit: int
    ) -> list[str]:
        """Sessions with unsummarized observations that have reached ``threshold``, or whose
        last event came before ``idle_before``; not attempted since ``retry_before``."""

    @abstractmethod
    def mark_summary_attempt(self, session_id: str, at: str) -> None:
        """Remember when a session's summary was last attempted (for the sweep's cooldown)."""

    @abstractmethod
    def sessions_to_compress(self, *, limit: int) -> list[str]:
        """Sessions with events past both their compression and summary watermarks."""
