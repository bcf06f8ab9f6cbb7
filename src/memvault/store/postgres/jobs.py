"""The job queue's PostgreSQL side (the rest is ``store.contract.jobs``): claimed by any replica.

A claim takes the oldest due job with ``FOR UPDATE SKIP LOCKED``: workers of every replica
claiming at once each lock a different row and none waits for another's. A job is a
worker's until its lease runs out; then any worker may claim it again. Finishing and failing
are conditional on still holding the claim (worker and attempt), so the late answer of a
worker whose lease was taken over is not kept.

Every time the queue compares (due, leased until, retry at) is the database's clock, not a
replica's: replicas whose clocks disagree still never take over a lease before it ends.
A ``run_after`` a caller gives is its own clock's, so a job queued for later may start a
little early or late by the difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg

from memvault.domain import Job
from memvault.store.contract.jobs import COLUMNS, JobQueue
from memvault.store.rows import job as _job

# The two kinds of candidate are looked up apart, each the first row of an index range (a
# due pending job by jobs_ready, an expired lease by jobs_leased), and the older taken.
_CLAIM = f"""
WITH due AS (
    SELECT id, run_after FROM jobs
    WHERE state = 'pending' AND run_after <= %(now)s AND kind = ANY(%(kinds)s)
    ORDER BY run_after, id LIMIT 1 FOR UPDATE SKIP LOCKED
), expired AS (
    SELECT id, run_after FROM jobs
    WHERE state = 'running' AND claimed_until < %(now)s AND kind = ANY(%(kinds)s)
    ORDER BY claimed_until, id LIMIT 1 FOR UPDATE SKIP LOCKED
), candidate AS (
    SELECT id FROM (SELECT * FROM due UNION ALL SELECT * FROM expired) AS found
    ORDER BY run_after, id LIMIT 1
)
UPDATE jobs SET state = 'running', claimed_by = %(worker)s, claimed_until = %(until)s,
    attempts = attempts + 1, updated_at = %(now)s
FROM candidate WHERE jobs.id = candidate.id
RETURNING {", ".join(f"jobs.{c.strip()}" for c in COLUMNS.split(","))}
"""


def database_now(conn: psycopg.Connection) -> datetime:
    """The database's clock: the same for every replica, whatever their own say."""
    return conn.execute("SELECT statement_timestamp()").fetchone()[0]


def claim(
    conn: psycopg.Connection, worker: str, kinds: Sequence[str], *, now: str, lease_until: str
) -> Job | None:
    """The oldest due job of these kinds (or one whose lease expired), now this worker's."""
    row = conn.execute(
        _CLAIM, {"now": now, "kinds": list(kinds), "worker": worker, "until": lease_until}
    ).fetchone()
    return _job(row) if row else None


class PostgresJobs(JobQueue):
    """The PostgreSQL side of the job queue: the database's clock, and its claim."""

    def _clock(self, conn: psycopg.Connection) -> datetime:
        return database_now(conn)

    _claim = staticmethod(claim)
