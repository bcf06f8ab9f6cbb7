"""The job queue part: the pipeline's work, with dedupe keys, leases and retries, written
once for both engines.

A job is a worker's until its lease runs out; then any worker may claim it again.
Finishing and failing are conditional on still holding the claim (worker and attempt), so
the late answer of a worker whose lease was taken over is not kept. Each engine supplies
its clock (``_clock``: PostgreSQL's is the database's, the same for every replica) and how
it finds the job to claim (``_claim``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import datetime, timedelta

from memvault import jsontext
from memvault.domain import Job, iso
from memvault.store.engine import Engine

COLUMNS = "id, kind, dedupe_key, payload, attempts, run_after, claimed_by, claimed_until"


class JobQueue(Engine, ABC):
    """The pipeline's work queue: dedupe keys, run-after times, leases, retries. Written
    once on the engine's connections; an engine supplies its clock and its claim."""

    @abstractmethod
    def _clock(self, conn) -> datetime:
        """The time the queue compares due times and leases with."""

    @abstractmethod
    def _claim(
        self, conn, worker: str, kinds: Sequence[str], *, now: str, lease_until: str
    ) -> Job | None:
        """The oldest due job of these kinds (or one whose lease expired), now the worker's."""

    def enqueue_job(
        self,
        kind: str,
        payload: dict,
        *,
        dedupe_key: str | None = None,
        run_after: str | None = None,
    ) -> bool:
        """Queue a job (due now unless ``run_after``); False when a pending job of the same
        kind has the same ``dedupe_key`` (a running one does not count: what arrives while
        it runs needs another run)."""
        insert = self._sql(
            "INSERT INTO jobs (kind, dedupe_key, payload, run_after, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
        )

        def op(conn) -> bool:
            now = iso(self._clock(conn))
            values = (kind, dedupe_key, jsontext.dumps(payload), run_after or now, now, now)
            return conn.execute(insert, values).rowcount == 1

        return self._writing(op)

    def claim_job(self, worker: str, kinds: Sequence[str], *, lease_seconds: float) -> Job | None:
        """Take the oldest due job of these kinds, or one whose worker's lease ran out."""
        kinds = list(kinds)

        def op(conn) -> Job | None:
            now = self._clock(conn)
            until = iso(now + timedelta(seconds=lease_seconds))
            return self._claim(conn, worker, kinds, now=iso(now), lease_until=until)

        return self._writing(op)

    def hurry_job(self, kind: str, dedupe_key: str) -> bool:
        """Make a pending job that was queued for later (never attempted) due now; False
        when there is none. A job waiting out a retry backoff keeps its time."""
        hurry = self._sql(
            "UPDATE jobs SET run_after = ?, updated_at = ? WHERE kind = ? AND dedupe_key = ? "
            "AND state = 'pending' AND attempts = 0 AND run_after > ?"
        )

        def op(conn) -> bool:
            now = iso(self._clock(conn))
            return conn.execute(hurry, (now, now, kind, dedupe_key, now)).rowcount == 1

        return self._writing(op)

    def finish_job(self, job: Job) -> bool:
        """Mark a claimed job done; False (and nothing written) if its lease was lost."""
        finish = self._sql(
            "UPDATE jobs SET state = 'done', error = NULL, claimed_until = NULL, updated_at = ? "
            "WHERE id = ? AND state = 'running' AND claimed_by = ? AND attempts = ?"
        )

        def op(conn) -> bool:
            now = iso(self._clock(conn))
            return conn.execute(finish, (now, job.id, job.claimed_by, job.attempts)).rowcount == 1

        return self._writing(op)

    def fail_job(self, job: Job, error: str, *, retry_in: float | None) -> bool:
        """Record a failure: due again in ``retry_in`` seconds, or failed for good."""
        fail = self._sql(
            "UPDATE jobs SET state = ?, error = ?, run_after = coalesce(?, run_after), "
            "claimed_by = NULL, claimed_until = NULL, updated_at = ? "
            "WHERE id = ? AND state = 'running' AND claimed_by = ? AND attempts = ?"
        )

        def op(conn) -> bool:
            now = self._clock(conn)
            retry_at = None if retry_in is None else iso(now + timedelta(seconds=retry_in))
            state = "pending" if retry_at else "failed"
            held = (job.id, job.claimed_by, job.attempts)
            return (
                conn.execute(fail, (state, error[:2000], retry_at, iso(now), *held)).rowcount == 1
            )

        return self._writing(op)

    def prune_jobs(self, before: str) -> int:
        """Delete finished and given-up jobs last touched before ``before``."""
        return self._change(
            "DELETE FROM jobs WHERE state IN ('done', 'failed') AND updated_at < ?", (before,)
        )
