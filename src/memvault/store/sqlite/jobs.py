"""The job queue's SQLite side: the writer thread's clock, and how a claim finds its job
(the rest of the queue is ``store.contract.jobs``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from memvault.domain import Job, utc_now
from memvault.store.contract.jobs import COLUMNS, JobQueue
from memvault.store.rows import job as _job


def claim(
    conn: sqlite3.Connection,
    worker: str,
    kinds: Sequence[str],
    *,
    now: str,
    lease_until: str,
) -> Job | None:
    """The oldest due job of these kinds (or one whose lease expired), now this worker's.

    The two kinds of candidate are looked up apart, each the first row of an index range
    (`jobs_ready` is in (state, run_after, id) order), so a claim costs the same with ten
    thousand jobs queued as with one; one query with an OR sorted every due job."""
    marks = ", ".join("?" * len(kinds))
    candidates = [
        conn.execute(
            f"SELECT run_after, id FROM jobs WHERE {due} AND kind IN ({marks}) "
            "ORDER BY run_after, id LIMIT 1",
            (now, *kinds),
        ).fetchone()
        for due in (
            "state = 'pending' AND run_after <= ?",
            "state = 'running' AND claimed_until < ?",
        )
    ]
    found = [c for c in candidates if c is not None]
    if not found:
        return None
    _, job_id = min(found)
    row = conn.execute(
        f"UPDATE jobs SET state = 'running', claimed_by = ?, claimed_until = ?, "
        f"attempts = attempts + 1, updated_at = ? WHERE id = ? RETURNING {COLUMNS}",
        (worker, lease_until, now, job_id),
    ).fetchone()
    return _job(row) if row else None


class SQLiteJobs(JobQueue):
    """The SQLite side of the job queue: its own clock, and its claim."""

    def _clock(self, conn: sqlite3.Connection) -> datetime:
        return utc_now()

    _claim = staticmethod(claim)
