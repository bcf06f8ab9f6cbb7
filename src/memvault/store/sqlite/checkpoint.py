"""WAL checkpoints off the commit path.

SQLite checkpoints a WAL database when a commit finds the log past 1,000 pages, in the
committing connection: that commit, here the writer's, then also copies the log into the
database file and syncs it, and every request queued behind it waits (26–104 ms measured
while indexing wrote beside a steady ingest). So the writer's connection does not
checkpoint (``wal_autocheckpoint = 0``), and this thread does, every
``CHECKPOINT_EVERY_SECONDS`` on a connection of its own, in PASSIVE mode: it never
waits for the writer or a reader, and commits go on while it copies. The log is reused
from its start once a checkpoint has taken all of it, so its file stays the size a
half-second of writes needs.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

CHECKPOINT_EVERY_SECONDS = 0.5


class Checkpointer:
    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        *,
        every: float = CHECKPOINT_EVERY_SECONDS,
        name: str = "memvault-sqlite-checkpoint",
    ) -> None:
        self._connect = connect
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        warned = float("-inf")
        try:
            while not self._stop.wait(self.every):
                try:
                    if conn is None:
                        conn = self._connect()
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error:  # the disk full, the file gone: the next turn tries again
                    if time.monotonic() - warned > 60:
                        warned = time.monotonic()
                        log.warning("a WAL checkpoint failed", exc_info=True)
        finally:
            if conn is not None:
                conn.close()
