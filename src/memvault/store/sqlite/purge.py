"""The purge part's SQLite side: the text columns read from the schema itself (FTS5
tables' columns included, their shadow tables left to FTS5), the event log's trigger
dropped and put back in the purge's transaction, and a compaction that leaves no old
bytes in the file or its WAL: the FTS5 indexes merged, a checkpoint that empties the WAL,
``VACUUM`` with ``secure_delete``, and another checkpoint."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence

from memvault.store.contract.purge import Column, Purge
from memvault.store.sqlite.fts5 import TABLES

log = logging.getLogger(__name__)

# Tables of counters and bookkeeping, with no text a person or a host wrote.
SKIPPED = frozenset(
    {"schema_migrations", "sequences", "counters", "cursors", "graph_counts", "purges"}
)
FTS5_SHADOWS = ("data", "idx", "content", "docsize", "config")
LEXICAL = frozenset(TABLES.values())  # analyzed terms, not text: dropped and written again
EVENT_GUARD = (
    "CREATE TRIGGER events_are_immutable BEFORE UPDATE ON events\n"
    "BEGIN\n    SELECT RAISE(ABORT, 'events are immutable');\nEND"
)
CHECKPOINT_TRIES = 50  # a reader mid-query holds the WAL back for a moment


class SQLitePurge(Purge):
    """Purge on SQLite: rewrites on the writer thread, compaction on a connection of its own."""

    _connect: Callable[[], sqlite3.Connection]

    def _text_columns(self, conn: sqlite3.Connection) -> list[Column]:
        tables = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        virtual = {name for name, sql in tables if (sql or "").upper().startswith("CREATE VIRTUAL")}
        shadows = {f"{name}_{part}" for name in virtual for part in FTS5_SHADOWS}
        columns: list[Column] = []
        for table, sql in tables:
            if table in SKIPPED or table in shadows or table in LEXICAL:
                continue
            info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
            primary = [row[1] for row in sorted(info, key=lambda r: r[5]) if row[5]]
            rowid = "WITHOUT ROWID" not in (sql or "").upper()
            key = ("rowid",) if rowid else tuple(primary)
            unique = _unique_columns(conn, table) | set(primary)
            for _, name, kind, *_rest in info:
                if "TEXT" in (kind or "").upper() or (table in virtual and not kind):
                    columns.append(Column(table, name, key, unique=name in unique))
        return columns

    def _scan(self, conn: sqlite3.Connection, sql: str) -> Iterable[tuple]:
        return conn.execute(sql)

    def _lift_event_guard(self, conn: sqlite3.Connection) -> None:
        conn.execute("DROP TRIGGER IF EXISTS events_are_immutable")

    def _restore_event_guard(self, conn: sqlite3.Connection) -> None:
        conn.execute(EVENT_GUARD)

    def _documents_with_terms(self, conn: sqlite3.Connection, terms: set[str]) -> set[int]:
        query = " OR ".join('"' + term.replace('"', '""') + '"' for term in sorted(terms))
        found: set[int] = set()
        for table in sorted(LEXICAL):
            rows = conn.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ?",
                (f"{{title body context}} : ({query})",),
            )
            found.update(row[0] for row in rows)
        return found

    def _drop_lexical(
        self, conn: sqlite3.Connection, ids: Sequence[int], reembed: set[int]
    ) -> None:
        for doc_id in ids:
            conn.execute(
                "UPDATE documents SET content_hash = 'purged', mtime = NULL WHERE id = ?",
                (doc_id,),
            )
            for table in sorted(LEXICAL):
                conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (doc_id,))
            if doc_id not in reembed:
                continue
            (revision,) = conn.execute(
                "UPDATE sequences SET value = value + 1 WHERE name = 'documents' RETURNING value"
            ).fetchone()
            conn.execute("UPDATE documents SET revision = ? WHERE id = ?", (revision, doc_id))
            conn.execute("DELETE FROM document_vectors WHERE document_id = ?", (doc_id,))

    def _compact(self, tables: Sequence[str]) -> None:
        conn = self._connect()
        try:
            conn.execute("PRAGMA secure_delete = ON")
            virtual = [
                name
                for (name,) in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'"
                )
            ]
            for name in virtual:  # merge segments: deleted terms leave the index's pages
                conn.execute(f'INSERT INTO "{name}" ("{name}") VALUES (\'optimize\')')
            _checkpoint(conn)
            conn.execute("VACUUM")
            _checkpoint(conn)
        finally:
            conn.close()


def _unique_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    found: set[str] = set()
    for _, name, unique, *_rest in conn.execute(f'PRAGMA index_list("{table}")').fetchall():
        if unique:
            found |= {row[2] for row in conn.execute(f'PRAGMA index_info("{name}")')}
    return found


def _checkpoint(conn: sqlite3.Connection) -> None:
    """Copy the whole WAL into the file and empty it; a reader in the middle of a query
    holds it back for a moment, so it is tried again."""
    for _ in range(CHECKPOINT_TRIES):
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy:
            return
        time.sleep(0.02)
    log.warning("the WAL could not be emptied after a purge: a reader held it")
