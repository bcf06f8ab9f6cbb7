"""The vault's owner among PostgreSQL replicas, and the writes the others queue for it.

Exactly one replica writes the vault folder at a time: the one holding a session-level
advisory lock (``VAULT_LOCK``) on a connection of its own, outside the pool, for as long as
it lives. PostgreSQL releases the lock when that connection ends, with the replica's
process (a SIGKILL included, once the server sees the socket close; TCP keepalives bound
how long a vanished host takes), and a standby asking ``pg_try_advisory_lock`` on its next
try takes over. A pooled connection could not hold it: the pool hands connections to
other work and replaces broken ones.

The queue is a plain table: replicas that do not own the vault insert their board and
fragment writes, the owner applies them in id order and marks each done with its answer.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import psycopg

from memvault import jsontext
from memvault.domain import iso, utc_now
from memvault.store.contract import VaultWrite
from memvault.store.rows import vault_write as _write

VAULT_LOCK = 0x6D76_0020  # pg_advisory_lock key: the vault's owner (the log's is 0x6D76_0001)
_KEEPALIVE = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
}
_COLUMNS = "id, kind, payload, done, result"
KEPT = timedelta(days=1)  # an applied write's answer is kept this long, for its waiter
# Applied writes past KEPT go; the vault's identity (see vault/owner.py) stays.
_PRUNE = "DELETE FROM vault_writes WHERE done AND applied_at < %s AND kind <> 'identity'"


class PostgresVaultWrites:
    """Mixed into ``PostgresStore``: queue reads and writes use its pool; the lock has its
    own connection."""

    url: str
    _pool: Any
    _transaction: Callable[..., Any]

    _owner_conn: psycopg.Connection | None = None
    _owner_guard = threading.Lock()

    def pool_stats(self) -> dict[str, int] | None:
        stats = self._pool.get_stats()
        size = int(stats.get("pool_size", 0))
        return {
            "size": size,
            "max": int(self._pool.max_size),
            "inUse": size - int(stats.get("pool_available", 0)),
            "waiting": int(stats.get("requests_waiting", 0)),
        }

    def take_vault_ownership(self) -> bool:
        with self._owner_guard:
            conn = self._owner_conn
            if conn is not None:
                try:
                    conn.execute("SELECT 1")  # the lock lives as long as this connection
                    return True
                except psycopg.Error:
                    _close(conn)
                    self._owner_conn = conn = None
            try:
                conn = psycopg.connect(self.url, autocommit=True, connect_timeout=5, **_KEEPALIVE)
                (held,) = conn.execute("SELECT pg_try_advisory_lock(%s)", (VAULT_LOCK,)).fetchone()
            except psycopg.Error:
                if conn is not None:
                    _close(conn)
                return False
            if not held:
                _close(conn)
                return False
            self._owner_conn = conn
            return True

    def give_up_vault_ownership(self) -> None:
        with self._owner_guard:
            if self._owner_conn is not None:
                _close(self._owner_conn)  # the session ends, and the lock with it
                self._owner_conn = None

    def queue_vault_write(self, key: str, kind: str, payload: dict) -> int:
        text = jsontext.dumps(payload)
        now = iso(utc_now())

        def op(conn: psycopg.Connection) -> int:
            conn.execute(
                "INSERT INTO vault_writes (request_key, kind, payload, created_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (request_key) DO NOTHING",
                (key, kind, text, now),
            )
            row = conn.execute("SELECT id FROM vault_writes WHERE request_key = %s", (key,))
            return int(row.fetchone()[0])

        return self._transaction(op)

    def vault_writes_due(self, *, limit: int = 50) -> list[VaultWrite]:
        sql = f"SELECT {_COLUMNS} FROM vault_writes WHERE NOT done ORDER BY id LIMIT %s"
        rows = self._transaction(lambda conn: conn.execute(sql, (limit,)).fetchall())
        return [_write(row) for row in rows]

    def finish_vault_write(self, write_id: int, result: dict) -> None:
        text = jsontext.dumps(result)
        now = utc_now()
        kept_from = iso(now - KEPT)

        def op(conn: psycopg.Connection) -> None:
            conn.execute(
                "UPDATE vault_writes SET done = true, result = %s, applied_at = %s "
                "WHERE id = %s AND NOT done",
                (text, iso(now), write_id),
            )
            conn.execute(_PRUNE, (kept_from,))

        self._transaction(op)

    def vault_write(self, write_id: int) -> VaultWrite | None:
        sql = f"SELECT {_COLUMNS} FROM vault_writes WHERE id = %s"
        row = self._transaction(lambda conn: conn.execute(sql, (write_id,)).fetchone())
        return None if row is None else _write(row)

    def vault_writes_waiting(self) -> int:
        sql = "SELECT count(*) FROM vault_writes WHERE NOT done"
        return int(self._transaction(lambda conn: conn.execute(sql).fetchone()[0]))


def _close(conn: psycopg.Connection) -> None:
    with contextlib.suppress(psycopg.Error):
        conn.close()
