"""Bringing a session's graph up to date from its events, one bounded batch at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memvault.derive.entities import CONTEXT_EVENTS, extract_graph
from memvault.domain import Watermark

if TYPE_CHECKING:
    from memvault.store import Store


def extract_session_graph(
    store: Store, session_id: str, *, limit: int, until_seq: int | None = None
) -> int:
    """Extract the graph of the session's events past its graph watermark (at most
    ``limit`` of them, none after ``until_seq``) and store it with the watermark moved to
    the last of them. How many events were handled: 0 when there were none, or when
    another run (or a reset) moved the watermark meanwhile, so nothing is counted twice.

    The ``CONTEXT_EVENTS`` events before the watermark are read again as context, for the
    relations that reach back into them (a failure, its fix, the passing run), and are
    not counted again: where the batches were cut changes nothing in the graph."""
    session = store.get_session(session_id)
    if session is None:
        return 0
    after = session.graph_extracted.seq or 0
    events = store.events_after(session_id, after, limit=limit)
    if until_seq is not None:
        events = [e for e in events if e.seq <= until_seq]
    if not events:
        return 0
    context = store.events_before(session_id, after, limit=CONTEXT_EVENTS) if after else []
    read = [*context, *events]
    observations = store.observations_of([e.seq for e in read])
    last = events[-1]
    written = store.write_graph(
        session_id,
        extract_graph(read, observations, after=after),
        through=Watermark(last.received_at, last.seq),
        after=after,
    )
    return len(events) if written else 0
