"""The hook spool, drained into the store.

A hook that cannot reach the server keeps its event in ``$MEMVAULT_HOME/spool``, one file
each (``memvault.hook.spool`` owns the format and says why). The server takes them in when
it starts and every few seconds after, in the order they were spooled, through the same
path as ``/observe/bulk`` (``Memory.observe_many``, which also signals the turn ends it
stores, as a live ``/observe`` does). A file is deleted only once its event is stored (or
found stored already), so a crash in between delivers it again and its event id makes that
a no-op. A file that cannot be read as a valid envelope, for whatever reason (not JSON,
nested too deep, not UTF-8, unreadable, over the body limit, not a regular file at all),
is moved to ``spool/bad/`` with a log line saying why, and the files after it are taken in
the same pass: never dropped silently, and never in the way of the rest.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.errors import InvalidInput
from memvault.hook import spool
from memvault.hook.paths import spool_folder
from memvault.ingest.envelope import Envelope, parse_json, validate

if TYPE_CHECKING:
    from memvault.memory import Memory

log = logging.getLogger(__name__)

DRAIN_INTERVAL = 2.0  # seconds between looks at the spool while the server runs
BATCH = 500
ABANDONED_AFTER = 600.0  # seconds: a temporary file this old belongs to a writer that died


@dataclass(slots=True)
class Drained:
    delivered: int = 0
    duplicates: int = 0  # stored before: a delivery that was answered too late
    set_aside: int = 0

    def __bool__(self) -> bool:
        return bool(self.delivered or self.duplicates or self.set_aside)


def folder_of(memory: Memory) -> Path:
    return Path(spool_folder(str(memory.settings.home)))


def drain(memory: Memory, folder: Path | None = None) -> Drained:
    """Store every event waiting in the spool. Stops early, leaving the rest for the next
    pass, when the store cannot take them."""
    folder = folder or folder_of(memory)
    drained = Drained()
    for name in spool.abandoned(str(folder), ABANDONED_AFTER):
        _set_aside(folder, name, "a hook died while writing it", drained)
    while names := spool.pending(str(folder), BATCH):
        if not _take(memory, folder, names, drained):
            break
    return drained


def _take(memory: Memory, folder: Path, names: list[str], drained: Drained) -> int:
    """Store one batch; the number of files it cleared from the spool."""
    before = drained.delivered + drained.duplicates + drained.set_aside
    waiting: list[tuple[Path, Envelope]] = []
    for name in names:
        path = folder / name
        try:
            content = spool.read(str(folder), name, memory.settings.max_body_bytes)
        except FileNotFoundError:
            continue  # another server sharing this home took it
        except spool.Unfit as exc:  # a FIFO or a folder in its place, too large, unreadable…
            _set_aside(folder, name, str(exc), drained)
            continue
        try:
            waiting.append((path, validate(Envelope, parse_json(content))))
        except InvalidInput as exc:  # not an envelope: not JSON, too deep, a bad field…
            _set_aside(folder, name, exc.message, drained)
    bulk = memory.observe_many(envelope for _, envelope in waiting)
    for error in bulk.errors:
        log.warning("spooled event %s not stored yet: %s", error.event_id, error.error)
    for (path, envelope), result in zip(waiting, bulk.results, strict=True):
        if result is None:
            continue  # the store failed: the file stays for the next pass
        path.unlink(missing_ok=True)
        if result.deduplicated:
            drained.duplicates += 1
            continue
        drained.delivered += 1
        if memory.needs_board_row(envelope.session_id):
            memory.register_from_event(envelope.session_id, envelope.agent_id)
    return drained.delivered + drained.duplicates + drained.set_aside - before


def _set_aside(folder: Path, name: str, reason: str, drained: Drained) -> None:
    bad = folder / spool.BAD
    bad.mkdir(exist_ok=True)
    try:
        os.replace(folder / name, bad / name.lstrip("."))
    except FileNotFoundError:
        return
    drained.set_aside += 1
    log.warning("spooled event %s set aside in %s: %s", name, bad, reason)


class SpoolDrain:
    """Drains the spool at once and then every ``interval`` seconds, in a background thread."""

    def __init__(self, memory: Memory, *, interval: float = DRAIN_INTERVAL) -> None:
        self.memory = memory
        self.folder = folder_of(memory)
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memvault-spool", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                drained = drain(self.memory, self.folder)
            except Exception:  # a folder gone read-only, a store shutting down…
                log.exception("could not drain the hook spool in %s", self.folder)
            else:
                if drained:
                    log.info(
                        "took in %d spooled events (%d stored before, %d set aside)",
                        drained.delivered,
                        drained.duplicates,
                        drained.set_aside,
                    )
            self._stop.wait(self.interval)
