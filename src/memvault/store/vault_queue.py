"""The queue of vault writes, written once for both engines: replicas that do not own the
vault insert their board and fragment writes (each keyed by its request, so queueing the
same request twice keeps one); the owner applies them in id order and marks each done with
its answer. Who owns the vault each engine says itself (its ``vault`` module).

``done`` is compared with TRUE and FALSE, which SQLite reads as 1 and 0 and PostgreSQL as
its boolean.
"""

from __future__ import annotations

from datetime import timedelta

from memvault import jsontext
from memvault.domain import iso, utc_now
from memvault.store.contract import VaultWrite
from memvault.store.engine import Engine
from memvault.store.rows import vault_write as _write

COLUMNS = "id, kind, payload, done, result"
KEPT = timedelta(days=1)  # an applied write's answer is kept this long, for its waiter
# Applied writes past KEPT go; the vault's identity (see vault/owner.py) stays.
PRUNE = "DELETE FROM vault_writes WHERE done = TRUE AND applied_at < ? AND kind <> 'identity'"


class VaultQueue(Engine):
    """The queued vault writes (a mixin of each store)."""

    def queue_vault_write(self, key: str, kind: str, payload: dict) -> int:
        values = (key, kind, jsontext.dumps(payload), iso(utc_now()))
        insert = self._sql(
            "INSERT INTO vault_writes (request_key, kind, payload, created_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (request_key) DO NOTHING"
        )
        queued = self._sql("SELECT id FROM vault_writes WHERE request_key = ?")

        def op(conn) -> int:
            conn.execute(insert, values)
            return int(conn.execute(queued, (key,)).fetchone()[0])

        return self._writing(op)

    def vault_writes_due(self, *, limit: int = 50) -> list[VaultWrite]:
        rows = self._select(
            f"SELECT {COLUMNS} FROM vault_writes WHERE done = FALSE ORDER BY id LIMIT ?", (limit,)
        )
        return [_write(row) for row in rows]

    def finish_vault_write(self, write_id: int, result: dict) -> None:
        now = utc_now()
        done = self._sql(
            "UPDATE vault_writes SET done = TRUE, result = ?, applied_at = ? "
            "WHERE id = ? AND done = FALSE"
        )
        prune = self._sql(PRUNE)

        def op(conn) -> None:
            conn.execute(done, (jsontext.dumps(result), iso(now), write_id))
            conn.execute(prune, (iso(now - KEPT),))

        self._writing(op)

    def vault_write(self, write_id: int) -> VaultWrite | None:
        row = self._select_one(f"SELECT {COLUMNS} FROM vault_writes WHERE id = ?", (write_id,))
        return None if row is None else _write(row)

    def vault_writes_waiting(self) -> int:
        row = self._select_one("SELECT count(*) FROM vault_writes WHERE done = FALSE")
        return int(row[0]) if row else 0
