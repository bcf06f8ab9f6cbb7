"""Background threads yield to the ones answering requests.

Indexing, embedding and the pipeline run in the server's process. On Linux a thread can be
given its own nice value, so they get the CPU only when requests do not need it; the
ingest path stays fast while a backlog is worked through. Elsewhere this does nothing.
"""

from __future__ import annotations

import contextlib
import os
import threading

BACKGROUND_NICENESS = 10


def lower_this_threads_priority() -> None:
    """Make the calling thread (only it) yield the CPU to the rest of the process."""
    if not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return
    with contextlib.suppress(OSError):
        current = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        os.setpriority(
            os.PRIO_PROCESS, threading.get_native_id(), max(current, BACKGROUND_NICENESS)
        )
