"""The job queue in SQLite: durable, deduplicated, claimed with a lease.

A job is claimed by one worker until its lease runs out; a worker that dies leaves its job
to be claimed again once the lease has expired. Finishing is conditional on still holding
the claim, and the job's output is written in the same transaction, so a job whose lease
was taken over never writes twice.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from datetime import timedelta

from memvault import jsontext
from memvault.domain import Job, iso, utc_now
from memvault.store.rows import job as _job
from memvault.store.sqlite.writer import Writer

_COLUMNS = "id, kind, dedupe_key, payload, attempts, run_after, claimed_by, claimed_until"


def enqueue(
    conn: sqlite3.Connection,
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
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (kind, dedupe_key, jsontext.dumps(payload), run_after, now, now),
    )
    return cursor.rowcount == 1


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
        f"attempts = attempts + 1, updated_at = ? WHERE id = ? RETURNING {_COLUMNS}",
        (worker, lease_until, now, job_id),
    ).fetchone()
    return _job(row) if row else None


def finish(
    conn: sqlite3.Connection,
    job: Job,
    now: str,
    output: Callable[[sqlite3.Connection], None] | None,
) -> bool:
    """Mark the job done and write its output, if the worker still holds it."""
    held = conn.execute(
        "UPDATE jobs SET state = 'done', error = NULL, claimed_until = NULL, updated_at = ? "
        "WHERE id = ? AND state = 'running' AND claimed_by = ? AND attempts = ?",
        (now, job.id, job.claimed_by, job.attempts),
    ).rowcount
    if held and output is not None:
        output(conn)
    return bool(held)


def fail(conn: sqlite3.Connection, job: Job, error: str, *, now: str, retry_at: str | None) -> bool:
    """Record a failure: pending again from ``retry_at``, or failed for good without one."""
    return bool(
        conn.execute(
            "UPDATE jobs SET state = ?, error = ?, run_after = coalesce(?, run_after), "
            "claimed_by = NULL, claimed_until = NULL, updated_at = ? "
            "WHERE id = ? AND state = 'running' AND claimed_by = ? AND attempts = ?",
            (
                "pending" if retry_at else "failed",
                error[:2000],
                retry_at,
                now,
                job.id,
                job.claimed_by,
                job.attempts,
            ),
        ).rowcount
    )


def prune(conn: sqlite3.Connection, before: str) -> int:
    """Forget finished jobs (done, or given up) last touched before ``before``."""
    return conn.execute(
        "DELETE FROM jobs WHERE state IN ('done', 'failed') AND updated_at < ?", (before,)
    ).rowcount


class SQLiteJobs:
    """The job queue part of the SQLite store, on its writer thread."""

    _writer: Writer
    _reader: Callable[[], sqlite3.Connection]

    def enqueue_job(
        self,
        kind: str,
        payload: dict,
        *,
        dedupe_key: str | None = None,
        run_after: str | None = None,
    ) -> bool:
        now = iso(utc_now())
        return self._writer.call(
            lambda conn: enqueue(
                conn, kind, payload, dedupe_key=dedupe_key, run_after=run_after or now, now=now
            )
        )

    def claim_job(self, worker: str, kinds: Sequence[str], *, lease_seconds: float) -> Job | None:
        now = utc_now()
        until = iso(now + timedelta(seconds=lease_seconds))
        kinds = list(kinds)
        return self._writer.call(
            lambda conn: claim(conn, worker, kinds, now=iso(now), lease_until=until)
        )

    def hurry_job(self, kind: str, dedupe_key: str) -> bool:
        now = iso(utc_now())
        return self._writer.call(
            lambda conn: (
                conn.execute(
                    "UPDATE jobs SET run_after = ?, updated_at = ? WHERE kind = ? "
                    "AND dedupe_key = ? AND state = 'pending' AND attempts = 0 AND run_after > ?",
                    (now, now, kind, dedupe_key, now),
                ).rowcount
                == 1
            )
        )

    def finish_job(self, job: Job) -> bool:
        return self._writer.call(lambda conn: finish(conn, job, iso(utc_now()), None))

    def prune_jobs(self, before: str) -> int:
        return self._writer.call(lambda conn: prune(conn, before))

    def fail_job(self, job: Job, error: str, *, retry_in: float | None) -> bool:
        now = utc_now()
        retry_at = None if retry_in is None else iso(now + timedelta(seconds=retry_in))
        return self._writer.call(
            lambda conn: fail(conn, job, error, now=iso(now), retry_at=retry_at)
        )
