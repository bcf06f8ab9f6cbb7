"""Which replica writes the vault, and how the others' board and fragment writes reach it.

Several servers on one PostgreSQL database may share one vault folder; exactly one of them
(the owner) writes it. The store says who: ``take_vault_ownership`` holds a lock the
database releases when the owner's process dies (SQLite: one server, always the owner).
``VaultOwner`` asks again every ``try_every`` seconds, so a standby takes over a second or
two after the owner is gone, and it tells the server when it gains or loses the vault (the
server then starts or stops what writes it: the board watcher, the pipeline).

A replica that does not own the vault queues a write in the database (``submit``) and waits
for the owner to apply it: the answer is then the owner's own. The queue survives the
owner's death: the next owner applies what is left, in order. A write is marked done only
after it was applied, so an owner killed between the two leaves it to be applied again by
the next (board updates merge, and a fragment saved twice merges into itself).

Replicas without a shared volume each have a folder of their own, and only one of them is
the vault. So that a replica whose folder is not it never takes over (and never drops from
the index the fragments its folder lacks), the vault carries an identity, ``memory/.vault-id``,
which the first owner records in the database (as a queued write of its own kind, done at
once); a replica whose folder holds another identity, or none once one is recorded, gives
the lock back and stays a standby, and health says why. SQLite is not checked: its one
server owns the vault, wherever ``MEMVAULT_VAULT`` points.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Protocol

from memvault.domain import iso, utc_now
from memvault.errors import MemvaultError

log = logging.getLogger(__name__)

TRY_EVERY_SECONDS = 1.0  # how often a standby asks for the lock (and the owner checks it)
APPLY_EVERY_SECONDS = 0.1  # how often the owner looks for queued writes
WAIT_SECONDS = 10.0  # how long a replica waits for the owner to apply its write
_POLL_SECONDS = 0.05
IDENTITY_FILE = Path("memory") / ".vault-id"
_IDENTITY_KEY = "vault-identity"

Apply = Callable[[str, dict], dict]


class QueuedWrite(Protocol):
    """A write queued for the owner: what to do, and once done, what it answered."""

    @property
    def id(self) -> int: ...

    @property
    def kind(self) -> str: ...

    @property
    def payload(self) -> dict: ...

    @property
    def done(self) -> bool: ...

    @property
    def result(self) -> dict | None: ...


class WriteLedger(Protocol):
    """Where replicas agree on the vault's owner and queue its writes (the store is one):
    a lock the owner holds, and a queue of writes with their answers."""

    @property
    def engine(self) -> str: ...

    def take_vault_ownership(self) -> bool: ...

    def give_up_vault_ownership(self) -> None: ...

    def queue_vault_write(self, key: str, kind: str, payload: dict) -> int: ...

    def vault_writes_due(self, *, limit: int = 50) -> list[QueuedWrite]: ...

    def finish_vault_write(self, write_id: int, result: dict) -> None: ...

    def vault_write(self, write_id: int) -> QueuedWrite | None: ...

    def vault_writes_waiting(self) -> int: ...


class VaultWriteQueued(MemvaultError):
    """The write is queued in the database, and the vault's owner has not applied it yet
    (none runs, or it is taking over): it will be written when one does."""

    def __init__(self, write_id: int) -> None:
        super().__init__(
            f"accepted: queued as vault write {write_id}; the replica that owns the vault "
            "writes it when it can (none has applied it yet)"
        )
        self.write_id = write_id


@dataclass(eq=False)
class VaultOwner:
    """This process's claim on the vault: whether it owns it, since when, and the loop that
    keeps asking (a standby) or applies the queue (the owner)."""

    store: WriteLedger
    _: KW_ONLY
    apply: Apply
    on_gain: Callable[[], None] = lambda: None
    on_loss: Callable[[], None] = lambda: None
    try_every: float = TRY_EVERY_SECONDS
    apply_every: float = APPLY_EVERY_SECONDS
    wait: float = WAIT_SECONDS  # how long a write handed over waits for the owner's answer
    vault: Path | None = None  # checked against the recorded identity (PostgreSQL)
    refusal: str | None = field(default=None, init=False)  # why this replica will not own it
    owner: bool = field(default=False, init=False)
    since: str | None = field(default=None, init=False)  # when it became the owner, or a standby
    _checked: bool = field(default=False, init=False)
    _guard: threading.Lock = field(default_factory=threading.Lock, init=False)  # one at a time
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    # -- ownership ------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._thread is not None

    def is_owner(self) -> bool:
        """Whether this process writes the vault. Without the loop (a command run in its own
        process), asked once of the store."""
        if not self._checked:
            self.check()
        return self.owner

    def check(self) -> bool:
        """Ask the store once; start or stop what writes the vault on a change."""
        held = False
        if self.refusal is None:
            try:
                held = self.store.take_vault_ownership()
                if held and not self.owner:
                    held = self._is_the_vault()
            except Exception:
                log.warning("could not ask who owns the vault", exc_info=True)
                held = False
        first = not self._checked
        self._checked = True
        if held != self.owner or first:
            self.owner = held
            self.since = iso(utc_now())
            if held:
                log.info("this replica owns the vault now")
                self.on_gain()
            elif not first:
                log.warning("this replica no longer owns the vault")
                self.on_loss()
        return held

    def _is_the_vault(self) -> bool:
        """Whether this replica's folder is the vault the database was written with; if it
        is not, the lock is given back and ``refusal`` says why."""
        if self.vault is None or self.store.engine == "sqlite":
            return True
        marker = self.vault / IDENTITY_FILE
        mine = marker.read_text(encoding="utf-8").strip() if marker.is_file() else None
        proposed = mine or uuid.uuid4().hex
        write_id = self.store.queue_vault_write(_IDENTITY_KEY, "identity", {"id": proposed})
        write = self.store.vault_write(write_id)
        recorded = str(write.payload.get("id")) if write is not None else proposed
        if write is not None and not write.done:
            self.store.finish_vault_write(write_id, {})
        if mine is None and recorded == proposed:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(proposed + "\n", encoding="utf-8")
            return True
        if mine == recorded:
            return True
        self.refusal = (
            f"this replica's vault folder {self.vault} is not the vault this database was "
            f"written with (its {IDENTITY_FILE} {'says ' + mine if mine else 'is missing'}; "
            f"the vault's says {recorded}): it will not write it. Share the vault's folder, "
            f"or, if this folder is the vault now, put {recorded} in its {IDENTITY_FILE}"
            " and restart"
        )
        log.error("%s", self.refusal)
        self.store.give_up_vault_ownership()
        return False

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="memvault-vault", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the loop and let another replica take the vault."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=10)
            self._thread = None
        if self.owner:
            self.owner = False
            self.on_loss()
        self.store.give_up_vault_ownership()
        self._checked = False

    def _run(self) -> None:
        next_try = 0.0
        while not self._stop.is_set():
            if time.monotonic() >= next_try:
                self.check()
                next_try = time.monotonic() + self.try_every
            if self.owner:
                try:
                    self.apply_due()
                except Exception:  # a database away for a moment: the next round retries
                    log.warning("could not apply the queued vault writes", exc_info=True)
            self._stop.wait(self.apply_every if self.owner else self.try_every)

    # -- the queue ------------------------------------------------------------------------

    def apply_due(self) -> int:
        """Apply the queued writes, oldest first (the owner does); how many."""
        done = 0
        with self._guard:
            while self.owner and not self._stop.is_set():
                due = self.store.vault_writes_due()
                if not due:
                    return done
                for write in due:
                    result = self.apply(write.kind, write.payload)
                    self.store.finish_vault_write(write.id, result)
                    done += 1
        return done

    def submit(self, kind: str, payload: dict) -> dict:
        """Queue a write for the owner and wait for its answer; raises ``VaultWriteQueued``
        when it was not applied within ``wait`` seconds (it stays queued)."""
        write_id = self.store.queue_vault_write(uuid.uuid4().hex, kind, payload)
        deadline = time.monotonic() + self.wait
        while True:
            write = self.store.vault_write(write_id)
            if write is not None and write.done:
                return write.result or {}
            if time.monotonic() >= deadline:
                raise VaultWriteQueued(write_id)
            time.sleep(_POLL_SECONDS)

    def waiting(self) -> int:
        """Writes queued and not applied yet."""
        return self.store.vault_writes_waiting()
