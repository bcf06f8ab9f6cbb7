"""Transfer: the log and the sessions as an archive moves them. An export reads the
events up to a point, batch by batch, and finds single events by sequence number; an
import writes back, besides the events capture stores, the sessions with their titles and
board links, and how far each session's fragments were already extracted.

Reading sessions one by one, or a page of them, is ``Reads``'s."""

from __future__ import annotations

from collections.abc import Iterator

from memvault.domain import Event, Session, Watermark
from memvault.store import Store

EVENT_BATCH = 1000


class Transfer:
    """What the archive's export and import need of the store, and nothing more."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- export ---------------------------------------------------------------------------

    def events_through(self, end: int) -> Iterator[Event]:
        """The log's events up to sequence ``end``, in order, read ``EVENT_BATCH`` at a
        time, so a log of any size is read in bounded memory."""
        seq = 0
        while seq < end and (batch := self.store.log_after(seq, limit=EVENT_BATCH)):
            for event in batch:
                if event.seq > end:
                    return
                yield event
            seq = batch[-1].seq

    def event_at(self, seq: int) -> Event | None:
        """The event of sequence number ``seq``, or None when there is none."""
        found = self.store.events_of([seq])
        return found[0] if found else None

    # -- import ---------------------------------------------------------------------------

    def restore_session(self, session_id: str, **known: str | None) -> None:
        """Create the session if it does not exist, with what the archive knew of it
        (``project``, ``cwd``, ``agent_id``); give it ``title`` if one is given."""
        self.store.ensure_session(session_id, **known)

    def retitle(self, session: Session, title: str) -> None:
        """Give a stored session a new title."""
        self.store.ensure_session(session.id, project=session.project, cwd=session.cwd, title=title)

    def board_row_taken(self, board_session_id: str) -> bool:
        """Whether a session here is tied to this board row already."""
        return self.store.board_session_taken(board_session_id)

    def link_board_row(
        self, session_id: str, board_session_id: str, *, replacing: str | None
    ) -> bool:
        """Tie a session to its board row, in place of ``replacing``; False if the session
        was tied to another row meanwhile."""
        return self.store.link_board_session(session_id, board_session_id, replacing=replacing)

    def mark_extracted(self, session_id: str, seq: int) -> bool:
        """Note that the session's fragments were extracted through event ``seq`` (never
        moving back); whether the mark moved. False too when no event has that number."""
        event = self.event_at(seq)
        if event is None:
            return False
        return self.store.advance_extraction(session_id, Watermark(event.received_at, seq))
