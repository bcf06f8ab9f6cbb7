"""The board part: the session board mirrored from the vault, and the vault's owner with
the writes other replicas queue for it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from memvault.domain import BoardRow


class BoardMirror(ABC):
    """The session board mirrored from the vault, and which host session each row is."""

    @abstractmethod
    def link_board_session(
        self, session_id: str, board_session_id: str, *, replacing: str | None = None
    ) -> bool:
        """Tie a host session to its board row. It must not have one yet, or have
        ``replacing`` (a row that left the board); False if another writer got there first."""

    @abstractmethod
    def board_links(self) -> dict[str, tuple[str, str]]:
        """Board Session ID → (host session id, project) for every tied session."""

    @abstractmethod
    def board_last_events(self) -> dict[str, str]:
        """Board Session ID → when its tied host session's last event happened (ISO time;
        never later than it was received: a host's clock may run ahead), for every tied
        session with events."""

    @abstractmethod
    def board_session_taken(self, board_session_id: str) -> bool:
        """Whether a host session is tied to this board Session ID."""

    @abstractmethod
    def replace_board_rows(self, rows: Sequence[BoardRow]) -> None:
        """Make the board mirror exactly ``rows`` (in board order)."""

    @abstractmethod
    def board_rows(self, *, status: str | None = None, limit: int = 1000) -> list[BoardRow]:
        """Mirrored board rows in board order, optionally of one status."""

    @abstractmethod
    def board_row(self, session_id: str) -> BoardRow | None:
        """The mirrored row of one Memory Session ID, if the board has it."""

    @abstractmethod
    def board_row_count(self) -> int:
        """Rows of the mirrored session board."""


@dataclass(frozen=True, slots=True)
class VaultWrite:
    """A board or fragment write a replica that does not own the vault left for the owner."""

    id: int
    kind: str  # the Memory use case to run: register, update, remember, …
    payload: dict
    done: bool = False
    result: dict | None = None  # what the owner's run answered, once done


class VaultWrites(ABC):
    """Who owns the vault (writes its files), and the writes the other replicas queue for
    it. Applied in queue order by the owner; each is keyed by its request, so queueing the
    same request twice keeps one."""

    @abstractmethod
    def pool_stats(self) -> dict[str, int] | None:
        """The connection pool's state (size, in use, waiting), or None for an engine
        without one (SQLite)."""

    @abstractmethod
    def take_vault_ownership(self) -> bool:
        """Whether this store's process owns the vault now: holds the owner's lock, taking
        it if it is free (SQLite: always, there is one server)."""

    @abstractmethod
    def give_up_vault_ownership(self) -> None:
        """Let another replica take the vault (on close)."""

    @abstractmethod
    def queue_vault_write(self, key: str, kind: str, payload: dict) -> int:
        """Queue a write for the owner; its id (the earlier one's for a key queued before)."""

    @abstractmethod
    def vault_writes_due(self, *, limit: int = 50) -> list[VaultWrite]:
        """Writes not applied yet, oldest first."""

    @abstractmethod
    def finish_vault_write(self, write_id: int, result: dict) -> None:
        """Mark a write applied, with what it answered."""

    @abstractmethod
    def vault_write(self, write_id: int) -> VaultWrite | None:
        """One queued write, applied or not."""

    @abstractmethod
    def vault_writes_waiting(self) -> int:
        """Writes queued and not applied yet: the vault's lag."""
