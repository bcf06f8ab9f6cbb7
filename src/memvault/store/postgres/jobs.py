"""The job queue in PostgreSQL: durable, deduplicated, claimed with a lease by any replica.

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

from memvault import jsontext
from memvault.domain import Job
from memvault.store.rows import job as _job

_COLUMNS = "id, kind, dedupe_key, payload, attempts, run_after, claimed_by, claimed_until"

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
RETURNING {", ".join(f"jobs.{c.strip()}" for c in _COLUMNS.split(","))}
"""


def database_now(conn: psycopg.Connection) -> datetime:
    """The database's clock: the same for every replica, whatever their own say."""
    return conn.execute("SELECT statement_timestamp()").fetchone()[0]


def enqueue(
    conn: psycopg.Connection,
    kind: str,
    payload: dict,
    *,
    dedupe_key: str | None,
    run_after: str,
    now: str,
) -> bool:
    """Queue a job; False when a pending job has the same key."""
    cursor = conn.execute(
        "INSERT INTO jobs (kind, dedupe_key, payload, run_after, created_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (kind, dedupe_key, jsontext.dumps(payload), run_after, now, now),
    )
    return cursor.rowcount == 1


def claim(
    conn: psycopg.Connection, worker: str, kinds: Sequence[str], *, now: str, lease_until: str
) -> Job | None:
    """The oldest due job of these kinds (or one whose lease expired), now this worker's."""
    row = conn.execute(
        _CLAIM, {"now": now, "kinds": list(kinds), "worker": worker, "until": lease_until}
    ).fetchone()
    return _job(row) if row else None


def hurry(conn: psycopg.Connection, kind: str, dedupe_key: str, now: str) -> bool:
    """Make a pending job queued for later (never attempted) due now."""
    cursor = conn.execute(
        "UPDATE jobs SET run_after = %s, updated_at = %s WHERE kind = %s AND dedupe_key = %s "
        "AND state = 'pending' AND attempts = 0 AND run_after > %s",
        (now, now, kind, dedupe_key, now),
    )
    return cursor.rowcount == 1


def finish(conn: psycopg.Connection, job: Job, now: str) -> bool:
    """Mark the job done, if the worker still holds it."""
    cursor = conn.execute(
        "UPDATE jobs SET state = 'done', error = NULL, claimed_until = NULL, updated_at = %s "
        "WHERE id = %s AND state = 'running' AND claimed_by = %s AND attempts = %s",
        (now, job.id, job.claimed_by, job.attempts),
    )
    return cursor.rowcount == 1


def fail(conn: psycopg.Connection, job: Job, error: str, *, now: str, retry_at: str | None) -> bool:
    """Record a failure: pending again from ``retry_at``, or failed for good without one."""
    cursor = conn.execute(
        "UPDATE jobs SET state = %s, error = %s, run_after = coalesce(%s, run_after), "
        "claimed_by = NULL, claimed_until = NULL, updated_at = %s "
        "WHERE id = %s AND state = 'running' AND claimed_by = %s AND attempts = %s",
        (
            "pending" if retry_at else "failed",
            error[:2000],
            retry_at,
            now,
            job.id,
            job.claimed_by,
            job.attempts,
        ),
    )
    return cursor.rowcount == 1


def prune(conn: psycopg.Connection, before: str) -> int:
    """Forget finished jobs (done, or given up) last touched before ``before``."""
    cursor = conn.execute(
        "DELETE FROM jobs WHERE state IN ('done', 'failed') AND updated_at < %s", (before,)
    )
    return cursor.rowcount
