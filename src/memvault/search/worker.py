"""The indexer in the background while a server runs: woken after ingest, by a file
watcher on the vault, and by a slow timer as a safety net (``search/indexer.py`` is what
it runs)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import watchfiles

from memvault.background import Pacer, lower_this_threads_priority
from memvault.search.indexer import BATCH, Indexer

log = logging.getLogger(__name__)

BUSY_BATCH = 25  # while events arrive: a request waits at most one such write
FOLLOW_INTERVAL = 1.0  # seconds between looks at vectors other processes wrote


class IndexWorker:
    """Runs the indexer in the background: on a nudge after ingest, on vault changes, and
    every ``interval`` seconds in case a change went unseen. With replicas, only the vault's
    owner indexes, and it looks at the shared log every second."""

    def __init__(
        self, indexer: Indexer, *, interval: float = 30.0, pacer: Pacer | None = None
    ) -> None:
        self.indexer = indexer
        self.interval = interval
        # Each batch is a step of the server's background work: while events keep
        # arriving, the index falls behind for a while rather than slow the hook path.
        self.pacer = pacer or Pacer()
        self._wake = threading.Event()
        self._vault_changed = threading.Event()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, name="memvault-index", daemon=True),
            threading.Thread(target=self._watch, name="memvault-vault-watch", daemon=True),
        ]
        if indexer.semantic is not None:  # other replicas' vectors, into this one's memory
            self._threads.append(
                threading.Thread(target=self._follow, name="memvault-vector-follow", daemon=True)
            )

    def start(self) -> None:
        for folder in (self.indexer.fragments, self.indexer.sessions):
            folder.mkdir(parents=True, exist_ok=True)
        self._vault_changed.set()
        self._wake.set()
        for thread in self._threads:
            thread.start()

    def nudge(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout=10)

    def _run(self) -> None:
        lower_this_threads_priority()
        last_scan = float("-inf")
        failures = 0
        # On a database replicas share, events arrive at the others too, and nothing
        # nudges this one for them: the replica that indexes looks at the log every
        # FOLLOW_INTERVAL.
        shared = self.indexer.store.engine != "sqlite"
        wait = min(FOLLOW_INTERVAL, self.interval) if shared else self.interval
        while not self._stop.is_set():
            self._wake.wait(wait)
            self._wake.clear()
            if self._stop.is_set():
                return
            if not self.indexer.owns_vault():
                # One replica indexes the shared log (the vault's owner: it also scans the
                # vault's files); two would compute every batch twice and drop one. The
                # others follow the vectors it writes (`_follow`).
                continue
            try:
                # The timer counts from the last scan, so a steady stream of events (each
                # a nudge) cannot put off the safety-net scan.
                due = time.monotonic() - last_scan >= self.interval
                if due or self._vault_changed.is_set():
                    self._vault_changed.clear()
                    last_scan = time.monotonic()
                    self.indexer.scan_vault()
                # New events first, always: a long log of changes (an upgrade re-reading
                # every notice's neighbours) keeps none waiting; they are indexed between
                # its batches.
                while self._step(
                    lambda: self.indexer.index_observations(batch=self._batch())
                ) or self._step(lambda: self.indexer.index_changes(batch=self._batch())):
                    pass
                while self._step(self.indexer.embed_pending):
                    if self._vault_changed.is_set():
                        break  # a hand edit should not wait for a long embedding backlog
                failures = 0
            except Exception:
                failures += 1
                delay = min(2.0**failures, 60.0)
                if failures == 1 or failures % 10 == 0:
                    log.warning(
                        "indexing failed (%d in a row); retrying in %.0f s",
                        failures,
                        delay,
                        exc_info=True,
                    )
                self._stop.wait(delay)
                self._wake.set()

    def _batch(self) -> int:
        return BUSY_BATCH if self.pacer.busy else BATCH

    def _step(self, batch: Callable[[], int]) -> int:
        """One batch in its turn among the server's background work; how many it did (0
        once stopping)."""
        if self._stop.is_set():
            return 0
        with self.pacer.step(self._stop):
            return 0 if self._stop.is_set() else batch()

    def _follow(self) -> None:
        lower_this_threads_priority()
        warned = float("-inf")
        while not self._stop.wait(FOLLOW_INTERVAL):
            try:
                self.indexer.semantic.follow()
            except Exception:  # the database away: the next look tries again
                if time.monotonic() - warned > 60:
                    warned = time.monotonic()
                    log.warning("following other processes' vectors failed", exc_info=True)

    def _watch(self) -> None:
        try:
            for _ in watchfiles.watch(
                self.indexer.fragments,
                self.indexer.sessions.parent,
                stop_event=self._stop,
                debounce=200,
                step=50,
                rust_timeout=1000,
                yield_on_timeout=False,
                raise_interrupt=False,
            ):
                self._vault_changed.set()
                self._wake.set()
        except Exception:  # a vault on a drive that went away; the timer still scans
            log.warning(
                "watching the vault stopped; changes are found every %.0f s",
                self.interval,
                exc_info=True,
            )
