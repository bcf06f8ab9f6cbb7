"""The job queue part: the pipeline's work, with dedupe keys, leases and retries."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from memvault.domain import Job


class JobQueue(ABC):
    """The pipeline's work queue: dedupe keys, run-after times, leases, retries."""

    @abstractmethod
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

    @abstractmethod
    def claim_job(self, worker: str, kinds: Sequence[str], *, lease_seconds: float) -> Job | None:
        """Take the oldest due job of these kinds, or one whose worker's lease ran out."""

    @abstractmethod
    def hurry_job(self, kind: str, dedupe_key: str) -> bool:
        """Make a pending job that was queued for later (never attempted) due now; False
        when there is none. A job waiting out a retry backoff keeps its time."""

    @abstractmethod
    def finish_job(self, job: Job) -> bool:
        """Mark a claimed job done; False (and nothing written) if its lease was lost."""

    @abstractmethod
    def fail_job(self, job: Job, error: str, *, retry_in: float | None) -> bool:
        """Record a failure: due again in ``retry_in`` seconds, or failed for good."""

    @abstractmethod
    def prune_jobs(self, before: str) -> int:
        """Delete finished and given-up jobs last touched before ``before``."""
