"""The vault's owner among PostgreSQL replicas, and the writes the others queue for it.

Exactly one replica writes the vault folder at a time: the one holding a session-level
advisory lock (``VAULT_LOCK``) on a connection of its own, outside the pool, for as long as
it lives. PostgreSQL releases the lock when that connection ends, with the replica's
process (a SIGKILL included, once the server sees the socket close; TCP keepalives bound
how long a vanished host takes), and a standby asking ``pg_try_advisory_lock`` on its next
try takes over. A pooled connection could not hold it: the pool hands connections to
other work and replaces broken ones.

The queue the other replicas fill for it is ``store.vault_queue``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

import psycopg

from memvault.store.vault_queue import VaultQueue

VAULT_LOCK = 0x6D76_0020  # pg_advisory_lock key: the vault's owner (the log's is 0x6D76_0001)
_KEEPALIVE = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
}


class PostgresVaultWrites(VaultQueue):
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


def _close(conn: psycopg.Connection) -> None:
    with contextlib.suppress(psycopg.Error):
        conn.close()
