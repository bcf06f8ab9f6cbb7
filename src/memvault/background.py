"""Background threads yield to the ones answering requests.

Indexing, embedding and the pipeline run in the server's process, beside the requests that
store events. Three things keep the ingest path fast while a backlog is worked through:

- a background thread is marked (`lower_this_threads_priority`): on Linux it gets its own
  nice value, so it has the CPU only when requests do not need it, and the store's writer
  commits requests' writes before any write a background thread queued;
- one `Pacer` is shared by every background thread of a server: while events keep
  arriving, background steps together fill at most a fifth of the time, so the
  interpreter is free for requests most of the time;
- `favour_requests` makes the interpreter hand the GIL over sooner, so a request waiting
  for it while a background step computes waits about a millisecond, not five;
- a `QuietCollector` moves Python's full garbage collections, which stop every thread for
  tens of milliseconds in a server of a few hundred thousand objects, to moments when no
  event is arriving.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, dataclass, field

BACKGROUND_NICENESS = 10
SWITCH_INTERVAL_SECONDS = 0.001  # CPython's default is 0.005

_marks = threading.local()


def lower_this_threads_priority() -> None:
    """Mark the calling thread (only it) as background work: it yields the CPU to the rest
    of the process, and its writes queue behind those of requests."""
    _marks.background = True
    if not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return
    with contextlib.suppress(OSError):
        current = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        os.setpriority(
            os.PRIO_PROCESS, threading.get_native_id(), max(current, BACKGROUND_NICENESS)
        )


def in_background_thread() -> bool:
    """Whether the calling thread was marked by `lower_this_threads_priority`."""
    return getattr(_marks, "background", False)


def favour_requests() -> None:
    """Let a thread that waits for the GIL have it within about a millisecond. A server
    calls this once; it costs background work a little throughput, not requests."""
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_SECONDS))


class Pacer:
    """The background work of one server gives way while events arrive.

    Every background thread wraps each unit of its work (an index batch, a pipeline job)
    in `step()`. While events keep arriving (one came within ``quiet_seconds``), a step
    starts only when the rest earned by the steps before it, of every thread, is over:
    each step earns ``took * (1 / duty - 1)``, so together they fill at most ``duty`` of
    the time, and a long step is paid for by a long rest (capped at ``max_pause``, so
    background work never stops). When no event comes, steps follow one another at once
    and a backlog is worked through flat out; a rest in progress ends early.
    """

    def __init__(
        self,
        *,
        duty: float = 0.2,
        quiet_seconds: float = 0.5,
        max_pause: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < duty <= 1:
            raise ValueError(f"duty must be in (0, 1], not {duty}")
        self._clock = clock
        self.duty = duty
        self.quiet_seconds = quiet_seconds
        self.max_pause = max_pause
        self._lock = threading.Lock()
        self._last_event = float("-inf")
        self._rest_until = float("-inf")

    def event_arrived(self) -> None:
        """An event was stored: background steps give way for a while."""
        self._last_event = self._clock()

    @property
    def last_event(self) -> float:
        """When (on the pacer's clock) the last event was stored."""
        return self._last_event

    @property
    def busy(self) -> bool:
        """Whether events are arriving now."""
        return self._clock() - self._last_event < self.quiet_seconds

    @property
    def rest_left(self) -> float:
        """Seconds before the next background step may start (0 while no event comes)."""
        return max(self._rest_until - self._clock(), 0.0) if self.busy else 0.0

    @contextlib.contextmanager
    def step(self, stop: threading.Event | None = None) -> Iterator[None]:
        """Run one unit of background work once the rest is over, then add its own."""
        self.rest(stop)
        started = self._clock()
        try:
            yield
        finally:
            ended = self._clock()
            earned = (ended - started) * (1 / self.duty - 1)
            with self._lock:
                rest_from = max(self._rest_until, ended)
                self._rest_until = min(rest_from + earned, ended + self.max_pause)

    def rest(self, stop: threading.Event | None = None) -> None:
        """Wait while events arrive and the earned rest is not over (or ``stop`` is set)."""
        while (left := self.rest_left) > 0:
            wait = min(left, 0.05)
            if stop is not None:
                if stop.wait(wait):
                    return
            else:
                time.sleep(wait)


# The oldest generation's threshold while a `QuietCollector` runs: more young collections
# than a server makes in its life, so the interpreter never starts a full one by itself.
_NEVER = 1 << 30
# The thresholds are the interpreter's, not a collector's: the first collector installed
# keeps the old ones, the last one uninstalled puts them back.
_installed_lock = threading.Lock()
_installed: list[QuietCollector] = []
_saved_threshold: tuple[int, int, int] | None = None


@dataclass(eq=False)
class QuietCollector:
    """Full garbage collections at quiet moments, not in the middle of requests.

    CPython's collector runs a full (oldest-generation) collection by itself every so
    often; it holds the GIL for the whole walk over every tracked object, 60–145 ms in a
    busy server, and each request in flight waits that long. While it runs, the collector
    turns those off (the young generations still run; they are short), collects
    everything once the pacer has seen no event for ``quiet_seconds``, at most every
    ``every`` seconds, and then freezes what survived, so that a collection that must run
    while events keep arriving (after ``at_least_every`` seconds without a quiet moment,
    which keeps garbage in cycles bounded) walks only the objects made since.
    """

    pacer: Pacer
    _: KW_ONLY
    every: float = 30.0
    at_least_every: float = 600.0
    quiet_seconds: float = 2.0
    clock: Callable[[], float] = time.monotonic
    collections: int = field(default=0, init=False)  # full collections it ran
    _last: float = field(init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._last = self.clock()

    def install(self) -> None:
        """Collect and freeze what the server holds after starting, and take over the full
        collections from the interpreter (undone by `uninstall`)."""
        global _saved_threshold
        with _installed_lock:
            if self in _installed:
                return
            if not _installed:
                _saved_threshold = gc.get_threshold()
                young, middle, _ = _saved_threshold
                gc.set_threshold(young, middle, _NEVER)
            _installed.append(self)
        self._collect()

    def uninstall(self) -> None:
        with _installed_lock:
            if self not in _installed:
                return
            _installed.remove(self)
            if not _installed and _saved_threshold is not None:
                gc.unfreeze()
                gc.set_threshold(*_saved_threshold)

    def start(self) -> None:
        self.install()
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._run, name="memvault-collector", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        self.uninstall()

    def tick(self) -> bool:
        """Collect if it is time to; whether it did."""
        since = self.clock() - self._last
        quiet = self.clock() - self.pacer.last_event >= self.quiet_seconds
        if (quiet and since >= self.every) or since >= self.at_least_every:
            self._collect()
            return True
        return False

    def _collect(self) -> None:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.collections += 1
        self._last = self.clock()

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            self.tick()


class Loop:
    """A step run in a daemon thread every ``interval`` seconds until stopped: the shape of
    the server's hand-written background loops (the board watcher, the spool drain). A step
    that raises is logged (``failure`` says what could not be done) and run again next
    round: a half-edited file or a store shutting down must not end the loop."""

    def __init__(
        self,
        name: str,
        step: Callable[[], object],
        *,
        interval: float,
        failure: str,
        join_timeout: float = 10.0,
        logger: logging.Logger | None = None,
    ) -> None:
        self.step = step
        self.interval = interval
        self.failure = failure
        self.join_timeout = join_timeout
        self._log = logger or logging.getLogger(__name__)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.join_timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except Exception:
                self._log.warning("%s", self.failure, exc_info=True)
            self._stop.wait(self.interval)
