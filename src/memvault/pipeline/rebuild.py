"""Deriving everything again from the raw event log: observations, session summaries, the
fragments the pipeline wrote, the graph and the search index.

What people and agents wrote is kept: fragments written through ``remember`` (by an agent
or by hand), and any fragment the pipeline wrote that someone has edited since (its content
is no longer what the pipeline left). The rest is replaced by what the pipeline makes of the
log today, session by session, the way live processing would have made it.

Run it with the server and workers stopped: a job running meanwhile would write on top of
the reset. It is handed what it works on: the store, a pipeline opened for it, the vault
folder and the index's catch-up.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memvault.derive.synthetic import compress
from memvault.pipeline.service import Pipeline
from memvault.store import Store

log = logging.getLogger(__name__)

BATCH = 1000
SESSIONS_PAGE = 500

Progress = Callable[[str, int, int | None], None]  # step, done, total (None when unknown)


@dataclass
class Rebuilt:
    events: int = 0
    observations_changed: int = 0
    fragments_removed: int = 0
    fragments_kept: int = 0  # written by the pipeline, edited since
    sessions: int = 0
    summaries: int = 0
    fragments_written: int = 0
    graph_events: int = 0
    documents: int = 0


def rebuild(
    store: Store,
    pipeline: Pipeline,
    *,
    vault: Path,
    index_now: Callable[[], int],
    progress: Progress | None = None,
) -> Rebuilt:
    """Re-derive all derived memory from the raw log with ``pipeline``; what was done, in
    counts. ``index_now`` brings the search index up to date at the end."""
    report = Rebuilt()
    tell = progress or (lambda step, done, total: None)
    total_events = store.stats().events
    _observations(store, report, tell, total_events)
    store.reset_derived()
    store.reset_graph()
    _pipeline_fragments(store, vault, report)
    _sessions(store, pipeline, report, tell)
    # Fragments' part of the graph went with the reset; the pipeline's own were
    # counted again as they were written, and count once.
    tell("fragment graph", 0, None)
    graphed = pipeline.graph_fragments()
    tell("fragment graph", graphed, graphed)
    tell("index", 0, None)
    report.documents = index_now()
    tell("index", report.documents, report.documents)
    return report


def _observations(store: Store, report: Rebuilt, tell: Progress, total: int) -> None:
    """Each event's synthetic observation again (an LLM upgrade is undone; a changed
    derivation is applied); only the changed ones are logged for re-indexing."""
    seq = 0
    tell("observations", 0, total)
    while events := store.log_after(seq, limit=BATCH):
        drafts = [(event.seq, compress(event.hook_type, event.payload)) for event in events]
        report.observations_changed += store.rederive_observations(drafts)
        report.events += len(events)
        seq = events[-1].seq
        tell("observations", report.events, total)


def _pipeline_fragments(store: Store, vault: Path, report: Rebuilt) -> None:
    """Remove the fragment files the pipeline wrote that still hold what it left."""
    tracked = store.pipeline_fragments()
    for relative, digest in tracked.items():
        path = vault / relative
        try:
            content = path.read_bytes()
        except FileNotFoundError:
            continue
        if hashlib.sha256(content).hexdigest() == digest:
            path.unlink()
            report.fragments_removed += 1
        else:
            report.fragments_kept += 1
    store.forget_pipeline_fragments(list(tracked))


def _sessions(store: Store, pipeline: Pipeline, report: Rebuilt, tell: Progress) -> None:
    total = store.stats().sessions
    offset = 0
    tell("sessions", 0, total)
    while page := store.list_sessions(limit=SESSIONS_PAGE, offset=offset):
        offset += len(page)
        for session in page:
            _session(store, pipeline, session.id, report)
            report.sessions += 1
            tell("sessions", report.sessions, total)


def _session(store: Store, pipeline: Pipeline, session_id: str, report: Rebuilt) -> None:
    """One session through every process, each run until its watermark stops moving (a
    long session takes several runs)."""

    def mark(name: str) -> int | None:
        session = store.get_session(session_id)
        return None if session is None else getattr(session, name).seq

    if pipeline.compressing:
        _repeat(lambda: pipeline.compress_session(session_id, give_up=True), mark, "compressed")
    while pipeline.summarize_session(session_id) is not None:
        report.summaries += 1

    def extract() -> None:
        report.fragments_written += len(pipeline.extract_session(session_id))

    _repeat(extract, mark, "extracted")

    def graph() -> None:
        report.graph_events += pipeline.graph_session(session_id)

    _repeat(graph, mark, "graph_extracted")


def _repeat(run: Callable[[], object], mark: Callable[[str], int | None], name: str) -> None:
    while True:
        before = mark(name)
        run()
        if mark(name) == before:
            return
