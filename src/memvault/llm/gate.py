"""The concurrency gate all background LLM work in one process goes through.

Summaries, fragment extraction and compression run as independent jobs; without one shared
limit each would open its own calls and together they would overrun a local model server or
an API's rate limit.
"""

from __future__ import annotations

import threading
from types import TracebackType


class Gate:
    """At most `concurrency` holders at once; `with gate:` waits until a slot is free.

    A counter under a condition rather than a semaphore, so the size can change (settings
    reloaded) without losing track of the calls already inside.
    """

    def __init__(self, concurrency: int) -> None:
        self._condition = threading.Condition()
        self._active = 0
        self._limit = _checked(concurrency)

    @property
    def concurrency(self) -> int:
        return self._limit

    def resize(self, concurrency: int) -> None:
        """New size; calls already inside finish, and no new one enters above the new size."""
        with self._condition:
            self._limit = _checked(concurrency)
            self._condition.notify_all()

    def __enter__(self) -> Gate:
        with self._condition:
            self._condition.wait_for(lambda: self._active < self._limit)
            self._active += 1
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with self._condition:
            self._active -= 1
            self._condition.notify()


def _checked(concurrency: int) -> int:
    if concurrency < 1:
        raise ValueError(f"a gate needs at least one slot, not {concurrency}")
    return concurrency


_process_gate: Gate | None = None
_process_gate_lock = threading.Lock()


def process_gate(concurrency: int) -> Gate:
    """This process's one gate, sized by the latest `concurrency` asked for."""
    global _process_gate
    with _process_gate_lock:
        if _process_gate is None:
            _process_gate = Gate(concurrency)
        else:
            _process_gate.resize(concurrency)
        return _process_gate
