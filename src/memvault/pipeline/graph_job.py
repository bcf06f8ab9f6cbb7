"""The graph job: a session's part of the entity graph brought up to date from its events,
one bounded batch at a time, and every fragment's part added again after a reset."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memvault.derive.entities import CONTEXT_EVENTS, extract_graph
from memvault.domain import Watermark
from memvault.pipeline.jobs import GRAPH, queue
from memvault.pipeline.window import Window
from memvault.store import Store
from memvault.vault.fragments import live_fragment_files

GRAPH_EVENTS = 1000  # events per graph run


def graph_session(store: Store, window: Window, session_id: str) -> int:
    """Bring the session's part of the entity graph up to date; how many events it
    took (a long backlog takes several runs, each queued by the last)."""
    session = store.get_session(session_id)
    if session is None:
        return 0
    events = store.events_after(session_id, session.graph_extracted.seq or 0, limit=GRAPH_EVENTS)
    ready = window.ready(GRAPH, session, events)
    if not ready:
        return 0
    handled = extract_session_graph(store, session_id, limit=GRAPH_EVENTS, until_seq=ready[-1].seq)
    if handled == GRAPH_EVENTS:
        queue(store, GRAPH, session_id)
    return handled


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


def graph_fragments(fragments_path: Path, graph_fragment: Callable[[Path], None]) -> int:
    """Every fragment's part of the graph (archived ones and project summaries are
    not fragments of the live graph); a fragment already counted adds nothing."""
    paths = live_fragment_files(fragments_path)
    for path in paths:
        graph_fragment(path)
    return len(paths)
