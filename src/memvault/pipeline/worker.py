"""The background worker: runs queued jobs, one at a time per worker, with retries.

A job is claimed from the store's queue with a lease, run by the handler of its kind, then
marked done. A handler writes its output together with the watermark it advances, in one
transaction, so a job that runs again (after a crash, or a lease that ran out) finds
nothing new and writes nothing twice. A failing job is retried with exponential backoff
and given up after ``max_attempts``; it never advances a watermark.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping

from memvault.background import Pacer, lower_this_threads_priority
from memvault.domain import Job
from memvault.store import JobQueue

log = logging.getLogger(__name__)

Handler = Callable[[Job], None]

LEASE_SECONDS = 300.0
RETRY_BASE_SECONDS = 5.0
RETRY_MAX_SECONDS = 600.0
MAX_ATTEMPTS = 5


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


class Worker:
    def __init__(
        self,
        store: JobQueue,
        handlers: Mapping[str, Handler],
        *,
        poll_seconds: float = 1.0,
        lease_seconds: float = LEASE_SECONDS,
        retry_base_seconds: float = RETRY_BASE_SECONDS,
        max_attempts: int = MAX_ATTEMPTS,
        on_idle: Callable[[], None] | None = None,
        pacer: Pacer | None = None,
    ) -> None:
        self.store = store
        # Each job is a step of the server's background work, which gives way to ingest.
        self.pacer = pacer or Pacer()
        self.handlers = dict(handlers)
        self.poll_seconds = poll_seconds
        self.lease_seconds = lease_seconds
        self.retry_base_seconds = retry_base_seconds
        self.max_attempts = max_attempts
        self.on_idle = on_idle
        self.name = worker_name()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> bool:
        """Claim and run one due job; False when there was none."""
        job = self.store.claim_job(self.name, list(self.handlers), lease_seconds=self.lease_seconds)
        if job is None:
            return False
        try:
            self.handlers[job.kind](job)
        except Exception as exc:
            final = job.attempts >= self.max_attempts
            retry_in = None if final else self._backoff(job.attempts)
            self.store.fail_job(job, f"{type(exc).__name__}: {exc}", retry_in=retry_in)
            log.warning(
                "job %s (%s) failed on attempt %d%s",
                job.id,
                job.kind,
                job.attempts,
                "; giving up" if final else f"; retrying in {retry_in:.0f} s",
                exc_info=True,
            )
            return True
        if not self.store.finish_job(job):
            log.info("job %s (%s) was taken over after its lease ran out", job.id, job.kind)
        return True

    def _step(self) -> bool:
        with self.pacer.step(self._stop):
            return not self._stop.is_set() and self.run_once()

    def _backoff(self, attempts: int) -> float:
        return min(self.retry_base_seconds * 2 ** (attempts - 1), RETRY_MAX_SECONDS)

    def drain(self) -> int:
        """Run due jobs until none is left; how many ran."""
        ran = 0
        while self.run_once():
            ran += 1
        return ran

    def start(self) -> None:
        self._stop.clear()
        self.name = worker_name()
        self._thread = threading.Thread(target=self._run, name="memvault-worker", daemon=True)
        self._thread.start()

    def nudge(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        lower_this_threads_priority()
        self.name = worker_name()
        while not self._stop.is_set():
            try:
                if self.on_idle is not None:
                    self.on_idle()
                while not self._stop.is_set() and self._step():
                    pass
            except Exception:  # the store went away for a moment; try again next round
                log.warning("the worker could not reach the queue", exc_info=True)
            self._wake.wait(self.poll_seconds)
            self._wake.clear()
