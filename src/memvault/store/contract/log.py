"""The event log part: appending events (each with its observation) and reading them back."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import Future

from memvault.domain import AppendFailure, AppendResult, Event, NewEvent, Observation

AppendOutcome = AppendResult | AppendFailure


class EventLog(ABC):
    """The raw log of events and the observation derived from each at ingest.

    Events are never updated; the observations are read here (rewritten in ``Derived``)."""

    @abstractmethod
    def submit_events(self, events: Sequence[NewEvent]) -> Future[list[AppendOutcome]]:
        """Append events to the log, each with its observation and lazy session.

        Each event is its own unit: it lands whole (event, observation, session counters) or
        not at all, and a failure of one never fails another. An event whose
        ``(session_id, client_event_id)`` is already stored, or comes earlier in the same
        batch, is not written again: its result says ``deduplicated`` and carries the
        original ids. Results are in input order; the future resolves once they are durable.
        """

    def append_events(self, events: Sequence[NewEvent]) -> list[AppendOutcome]:
        return self.submit_events(events).result()

    @abstractmethod
    def events_after(self, session_id: str, seq: int, *, limit: int) -> list[Event]:
        """A session's events that arrived after sequence ``seq``, in arrival order."""

    @abstractmethod
    def log_after(self, seq: int, *, limit: int) -> list[Event]:
        """The whole log's events past ``seq``, in sequence order (for rebuilds)."""

    @abstractmethod
    def events_before(self, session_id: str, seq: int, *, limit: int) -> list[Event]:
        """The session's last ``limit`` events up to ``seq``, in the order they happened:
        the context a graph run reads again."""

    @abstractmethod
    def list_events(
        self,
        session_id: str,
        *,
        limit: int,
        offset: int = 0,
        hook_types: Sequence[str] | None = None,
    ) -> list[Event]:
        """Raw events as stored, in event order; only of ``hook_types`` when given."""

    @abstractmethod
    def events_of(self, seqs: Sequence[int]) -> list[Event]:
        """These events as stored, in sequence order."""

    @abstractmethod
    def last_event_seq(self) -> int:
        """The sequence number of the newest event; 0 when there is none."""

    @abstractmethod
    def events_of_hook(self, hook_type: str, after: int, through: int) -> list[Event]:
        """The events of one hook type with a sequence in ``(after, through]``, in order."""

    @abstractmethod
    def first_seq_received_since(self, when: str) -> int:
        """The sequence of the first event received at ``when`` (ISO) or later; one past
        the newest when none was."""

    @abstractmethod
    def observations_of(self, seqs: Sequence[int]) -> list[Observation]:
        """The observations of these events, in sequence order."""

    @abstractmethod
    def list_observations(
        self, session_id: str, *, limit: int, offset: int = 0
    ) -> list[Observation]:
        """In event order (event time, then arrival)."""

    @abstractmethod
    def observations_after(self, seq: int, *, limit: int) -> list[tuple[Observation, str]]:
        """Observations of events after sequence ``seq`` with their project, in seq order."""

    @abstractmethod
    def observation_window(
        self, session_id: str, first: tuple[str, int], last: tuple[str, int], *, margin: int
    ) -> list[tuple[Observation, str]]:
        """A session's observations (with their project) in event order, from ``margin``
        before the (occurred_at, seq) key ``first`` to ``margin`` after ``last``."""

    @abstractmethod
    def observation_changes(self, after: int, *, limit: int) -> list[tuple[int, int]]:
        """(change id, event seq) of observations rewritten in place, past change ``after``."""

    @abstractmethod
    def observation_changes_since(self, after: int) -> int:
        """How many changes are past change ``after``: a follower's backlog."""

    @abstractmethod
    def sessions_between(self, after: int, through: int) -> dict[str, str]:
        """Session id → project of the sessions with events after ``after`` up to
        ``through`` (sequence numbers)."""

    @abstractmethod
    def observations_since(self, seq: int) -> int:
        """How many observations belong to events after ``seq``: a follower's backlog."""
