"""The pipeline's job kinds, and queueing a job for a session.

A job names its session in its payload and is queued under the session id as its dedupe
key, so a session has at most one waiting job of a kind however often it is signalled.
"""

from __future__ import annotations

from memvault.domain import Job
from memvault.store import JobQueue

SUMMARIZE = "summarize"
EXTRACT = "extract"
GRAPH = "graph"
GRAPH_FRAGMENTS = "graph-fragments"
COMPRESS = "compress"
MAX_EVENTS = 20_000  # per run; a longer backlog is summarized over several runs


def queue(jobs: JobQueue, kind: str, session_id: str, *, run_after: str | None = None) -> bool:
    """Queue a job of ``kind`` for the session; False when one is already waiting."""
    return jobs.enqueue_job(
        kind, {"sessionId": session_id}, dedupe_key=session_id, run_after=run_after
    )


def session_of(job: Job) -> str:
    """The session a job is for."""
    return str(job.payload.get("sessionId") or "")
