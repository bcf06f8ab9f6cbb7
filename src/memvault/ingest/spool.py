"""The hook spool, drained into the store.

A hook that cannot reach the server keeps its event in ``$MEMVAULT_HOME/spool``, one file
each (``memvault.hook.spool`` owns the format and says why). The server takes them in when
it starts and every few seconds after, in the order they were spooled, through the same
path as ``/observe/bulk`` (the capture's ``observe_many``, which also signals the turn
ends it stores, as a live ``/observe`` does), and a session new to the server is announced
(``on_new_session``) as a live event's is, when the event carries work. A file is deleted
only once its event is stored (or found stored already), so a crash in between delivers it
again and its event id makes that a no-op. A file that cannot be read as a valid
envelope, for whatever reason (not JSON, nested too deep, not UTF-8, unreadable, over the
body limit, not a regular file at all), is moved to ``spool/bad/`` with a log line saying
why, and the files after it are taken in the same pass: never dropped silently, and never
in the way of the rest.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from memvault.background import Loop
from memvault.errors import InvalidInput
from memvault.hook import spool
from memvault.hook.paths import spool_folder
from memvault.ingest.capture import BulkResult
from memvault.ingest.envelope import Envelope, carries_work, parse_json, validate

log = logging.getLogger(__name__)

DRAIN_INTERVAL = 2.0  # seconds between looks at the spool while the server runs
BATCH = 500
ABANDONED_AFTER = 600.0  # seconds: a temporary file this old belongs to a writer that died


ObserveMany = Callable[[Iterable[Envelope]], BulkResult]
# A session's first event was stored: (host session id, agent id).
NewSession = Callable[[str, str | None], None]


@dataclass(slots=True)
class Drained:
    delivered: int = 0
    duplicates: int = 0  # stored before: a delivery that was answered too late
    set_aside: int = 0

    def __bool__(self) -> bool:
        return bool(self.delivered or self.duplicates or self.set_aside)


def folder_of(home: Path) -> Path:
    """The spool folder of the memory at ``home``."""
    return Path(spool_folder(str(home)))


def drain(
    folder: Path,
    observe_many: ObserveMany,
    on_new_session: NewSession = lambda session_id, agent_id: None,
    *,
    limit: int = spool.MAX_BODY_BYTES,
) -> Drained:
    """Store every event waiting in the spool (a file over ``limit`` bytes, the server's
    body limit, is set aside). Stops early, leaving the rest for the next pass, when the
    store cannot take them."""
    drained = Drained()
    for name in spool.abandoned(str(folder), ABANDONED_AFTER):
        _set_aside(folder, name, "a hook died while writing it", drained)
    while names := spool.pending(str(folder), BATCH):
        if not _take(observe_many, on_new_session, folder, names, limit, drained):
            break
    return drained


def _take(
    observe_many: ObserveMany,
    on_new_session: NewSession,
    folder: Path,
    names: list[str],
    limit: int,
    drained: Drained,
) -> int:
    """Store one batch; the number of files it cleared from the spool."""
    before = drained.delivered + drained.duplicates + drained.set_aside
    waiting: list[tuple[Path, Envelope]] = []
    for name in names:
        path = folder / name
        try:
            content = spool.read(str(folder), name, limit)
        except FileNotFoundError:
            continue  # another server sharing this home took it
        except spool.Unfit as exc:  # a FIFO or a folder in its place, too large, unreadable…
            _set_aside(folder, name, str(exc), drained)
            continue
        try:
            waiting.append((path, validate(Envelope, parse_json(content))))
        except InvalidInput as exc:  # not an envelope: not JSON, too deep, a bad field…
            _set_aside(folder, name, exc.message, drained)
    bulk = observe_many(envelope for _, envelope in waiting)
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
        if carries_work(envelope):
            on_new_session(envelope.session_id, envelope.agent_id)
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

    def __init__(
        self,
        folder: Path,
        observe_many: ObserveMany,
        on_new_session: NewSession = lambda session_id, agent_id: None,
        *,
        interval: float = DRAIN_INTERVAL,
        limit: int = spool.MAX_BODY_BYTES,
    ) -> None:
        self.folder = folder
        self.interval = interval
        self._drain = functools.partial(drain, folder, observe_many, on_new_session, limit=limit)
        self._loop = Loop(
            "memvault-spool",
            self._pass,
            interval=interval,
            failure=f"could not drain the hook spool in {folder}",
            join_timeout=30,
            logger=log,
        )

    def start(self) -> None:
        self._loop.start()

    def stop(self) -> None:
        self._loop.stop()

    def _pass(self) -> None:
        drained = self._drain()
        if drained:
            log.info(
                "took in %d spooled events (%d stored before, %d set aside)",
                drained.delivered,
                drained.duplicates,
                drained.set_aside,
            )
