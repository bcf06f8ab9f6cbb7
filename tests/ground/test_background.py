"""The pacer the server's background threads share: they give way while events arrive."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from memvault.background import (
    Pacer,
    QuietCollector,
    in_background_thread,
    lower_this_threads_priority,
)
from tests.helpers import wait_for


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def run_step(pacer: Pacer, clock: Clock, seconds: float) -> None:
    with pacer.step():
        clock.now += seconds


def test_with_no_event_arriving_steps_follow_one_another_at_once():
    clock = Clock()
    pacer = Pacer(duty=0.2, clock=clock)
    run_step(pacer, clock, 3.0)
    assert not pacer.busy
    assert pacer.rest_left == 0.0


def test_while_events_arrive_a_step_earns_a_rest_four_times_as_long_at_a_fifth_duty():
    clock = Clock()
    pacer = Pacer(duty=0.2, quiet_seconds=0.5, max_pause=2.0, clock=clock)
    run_step(pacer, clock, 0.1)
    pacer.event_arrived()
    assert pacer.rest_left == pytest.approx(0.4)
    clock.now += 0.3
    pacer.event_arrived()
    assert pacer.rest_left == pytest.approx(0.1)


def test_the_rest_of_several_threads_steps_adds_up_and_is_capped():
    clock = Clock()
    pacer = Pacer(duty=0.2, max_pause=2.0, clock=clock)
    run_step(pacer, clock, 0.05)  # the index
    run_step(pacer, clock, 0.05)  # the pipeline, right after, during the index's rest
    pacer.event_arrived()
    # 0.2 earned by each; the first rest began 0.05 s ago.
    assert pacer.rest_left == pytest.approx(0.35)
    clock.now += 1.0
    run_step(pacer, clock, 5.0)  # a long job: background work never stops for long
    pacer.event_arrived()
    assert pacer.rest_left == pytest.approx(2.0)


def test_a_rest_ends_when_events_stop_coming():
    clock = Clock()
    pacer = Pacer(duty=0.2, quiet_seconds=0.5, clock=clock)
    run_step(pacer, clock, 1.0)
    pacer.event_arrived()
    assert pacer.rest_left > 0
    clock.now += 0.6  # no event for longer than quiet_seconds
    assert pacer.rest_left == 0.0


def test_a_resting_step_returns_when_asked_to_stop():
    pacer = Pacer(duty=0.01, quiet_seconds=3600, max_pause=3600)
    with pacer.step():
        threading.Event().wait(0.05)
    pacer.event_arrived()
    assert pacer.rest_left > 1
    stop = threading.Event()
    stop.set()
    pacer.rest(stop)  # returns at once instead of resting for seconds


def test_only_a_marked_thread_counts_as_background_work():
    seen: list[bool] = []

    def background() -> None:
        lower_this_threads_priority()
        seen.append(in_background_thread())

    thread = threading.Thread(target=background)
    thread.start()
    thread.join()
    assert seen == [True]
    assert not in_background_thread()


def test_a_duty_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="duty"):
        Pacer(duty=0)


# -- full garbage collections at quiet moments ------------------------------------------


class FullCollections:
    """Counts the interpreter's oldest-generation collections while it is entered."""

    def __init__(self) -> None:
        self.count = 0

    def _seen(self, phase: str, info: dict) -> None:
        if phase == "stop" and info["generation"] == 2:
            self.count += 1

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._seen)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self._seen)


def make_survivors(n: int) -> list:
    """Containers that outlive the young generations: what makes full collections due."""
    return [[None] for _ in range(n)]


def test_while_installed_the_interpreter_starts_no_full_collection_by_itself():
    before = gc.get_threshold()
    clock = Clock()
    collector = QuietCollector(Pacer(clock=clock), clock=clock)
    with FullCollections() as full:
        # Keeping this many new containers runs full collections with the interpreter's
        # thresholds; the control shows it.
        kept = make_survivors(300_000)
        assert full.count > 0
        collector.install()
        try:
            assert gc.get_threshold()[:2] == before[:2]
            assert gc.get_freeze_count() > 0
            full.count = 0
            kept += make_survivors(300_000)
            assert full.count == 0
        finally:
            collector.uninstall()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_it_collects_once_quiet_at_most_every_period_and_under_load_only_when_overdue():
    clock = Clock()
    pacer = Pacer(clock=clock)
    collector = QuietCollector(
        pacer, every=30.0, at_least_every=600.0, quiet_seconds=2.0, clock=clock
    )
    collector.install()
    try:
        ran = collector.collections  # the one at install
        clock.now += 10
        assert not collector.tick()  # quiet, but collected 10 s ago
        clock.now += 25
        pacer.event_arrived()
        assert not collector.tick()  # due, but an event just came
        clock.now += 2.5
        assert collector.tick()  # due and quiet for 2.5 s
        assert collector.collections == ran + 1
        for _ in range(599):  # events every second for ten minutes
            clock.now += 1
            pacer.event_arrived()
            assert not collector.tick()
        clock.now += 1
        pacer.event_arrived()
        assert collector.tick()  # overdue: garbage in cycles stays bounded
        assert collector.collections == ran + 2
    finally:
        collector.uninstall()


def test_a_collection_frees_garbage_in_cycles_and_the_thread_stops():
    clock = Clock()
    collector = QuietCollector(Pacer(clock=clock), every=0.0, clock=clock)
    collector.start()
    try:
        alive = weakref.ref(Cycle())
        assert alive() is not None
        wait_for(lambda: alive() is None, timeout=5)
    finally:
        collector.stop()
    assert gc.get_freeze_count() == 0


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_two_collectors_in_one_process_put_the_thresholds_back_once_both_are_gone():
    before = gc.get_threshold()
    clock = Clock()
    first = QuietCollector(Pacer(clock=clock), clock=clock)
    second = QuietCollector(Pacer(clock=clock), clock=clock)
    first.install()
    second.install()
    first.uninstall()
    assert gc.get_threshold() != before  # the second still runs
    second.uninstall()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
