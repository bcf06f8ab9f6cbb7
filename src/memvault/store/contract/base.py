"""What every engine has whatever its parts: counts, the write queue's state, closing."""

from __future__ import annotations

from abc import ABC, abstractmethod

from memvault.domain import StoreStats


class StoreBase(ABC):
    """What every engine has whatever its parts: counts, the write queue's state, closing."""

    engine: str

    @abstractmethod
    def stats(self) -> StoreStats: ...

    @abstractmethod
    def sync(self) -> None:
        """Wait until every write queued so far (access counts included) is committed."""

    @property
    @abstractmethod
    def pending_writes(self) -> int:
        """Requests' writes queued but not yet committed (background threads' writes
        queue apart, behind them)."""

    @property
    @abstractmethod
    def write_failure(self) -> BaseException | None:
        """Why the store can no longer write, if it cannot."""

    def write_trouble(self) -> str | None:
        """Why writes fail for now (a full disk, a lock another process holds), if they do:
        the last write's failure, checked again with a small write, so it clears by itself
        once writes pass."""
        return None

    def transient(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised through this engine, is the database's failure of the
        moment (a connection lost, a transaction aborted to break a deadlock, a database
        read-only while it fails over): the same write may pass on a later try."""
        return False

    @abstractmethod
    def close(self) -> None: ...
