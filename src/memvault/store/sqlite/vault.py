"""The vault's ownership in SQLite: one server, always the owner.

A SQLite store has one server, so nothing is queued in practice; the queue
(``store.vault_queue``) is there so both engines keep one contract (and a test can drive
it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from memvault.store.vault_queue import VaultQueue


class SQLiteVaultWrites(VaultQueue):
    """Mixed into ``SQLiteStore``: there is no pool and no other replica."""

    _writer: Any
    _reader: Callable[[], sqlite3.Connection]

    def pool_stats(self) -> dict[str, int] | None:
        return None

    def take_vault_ownership(self) -> bool:
        return True

    def give_up_vault_ownership(self) -> None:
        pass
