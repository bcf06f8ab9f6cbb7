"""The vault's queue of writes in SQLite, and its ownership: one server, always the owner.

A SQLite store has one server, so nothing is queued in practice; the queue is here so both
engines keep one contract (and a test can drive it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from memvault import jsontext
from memvault.domain import iso, utc_now
from memvault.store.contract import VaultWrite
from memvault.store.rows import vault_write as _write

_COLUMNS = "id, kind, payload, done, result"
KEPT = timedelta(days=1)  # an applied write's answer is kept this long, for its waiter
# Applied writes past KEPT go; the vault's identity (see vault/owner.py) stays.
_PRUNE = "DELETE FROM vault_writes WHERE done = 1 AND applied_at < ? AND kind <> 'identity'"


class SQLiteVaultWrites:
    """Mixed into ``SQLiteStore``: writes go through its writer thread, reads its readers."""

    _writer: Any
    _reader: Callable[[], sqlite3.Connection]

    def pool_stats(self) -> dict[str, int] | None:
        return None

    def take_vault_ownership(self) -> bool:
        return True

    def give_up_vault_ownership(self) -> None:
        pass

    def queue_vault_write(self, key: str, kind: str, payload: dict) -> int:
        text = jsontext.dumps(payload)

        def op(conn: sqlite3.Connection) -> int:
            conn.execute(
                "INSERT INTO vault_writes (request_key, kind, payload, created_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (request_key) DO NOTHING",
                (key, kind, text, iso(utc_now())),
            )
            row = conn.execute("SELECT id FROM vault_writes WHERE request_key = ?", (key,))
            return int(row.fetchone()[0])

        return self._writer.call(op)

    def vault_writes_due(self, *, limit: int = 50) -> list[VaultWrite]:
        rows = self._reader().execute(
            f"SELECT {_COLUMNS} FROM vault_writes WHERE done = 0 ORDER BY id LIMIT ?", (limit,)
        )
        return [_write(row) for row in rows.fetchall()]

    def finish_vault_write(self, write_id: int, result: dict) -> None:
        text = jsontext.dumps(result)
        now = utc_now()
        kept_from = iso(now - KEPT)

        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE vault_writes SET done = 1, result = ?, applied_at = ? "
                "WHERE id = ? AND done = 0",
                (text, iso(now), write_id),
            )
            conn.execute(_PRUNE, (kept_from,))

        self._writer.call(op)

    def vault_write(self, write_id: int) -> VaultWrite | None:
        row = (
            self._reader()
            .execute(f"SELECT {_COLUMNS} FROM vault_writes WHERE id = ?", (write_id,))
            .fetchone()
        )
        return None if row is None else _write(row)

    def vault_writes_waiting(self) -> int:
        sql = "SELECT count(*) FROM vault_writes WHERE done = 0"
        return int(self._reader().execute(sql).fetchone()[0])
