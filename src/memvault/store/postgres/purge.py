"""The purge part's PostgreSQL side: the text columns read from the catalog, the event
log's trigger disabled for the purge's transaction only, documents' postings dropped until
the index writes them again (under the index's lock, with new revisions), and ``VACUUM
FULL`` of the tables a purge touched, so their files hold no dead copy of a replaced row.

The server's write-ahead log keeps the old rows until PostgreSQL recycles its segments;
that is the database's own, outside what a client can rewrite.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import psycopg

from memvault.store.contract.purge import Column, Purge
from memvault.store.postgres.bm25 import TERMS
from memvault.store.postgres.documents import DOCUMENTS_LOCK

SKIPPED = frozenset(
    {
        "schema_migrations",
        "sequences",
        "counters",
        "cursors",
        "graph_counts",
        "purges",
        "document_totals",
        *TERMS.values(),  # postings: dropped with their documents, written again from them
    }
)
_COLUMNS = """
SELECT c.table_name, c.column_name,
       coalesce(bool_or(i.indisprimary), false) AS primary_key,
       coalesce(bool_or(i.indisunique), false) AS unique_key
FROM information_schema.columns AS c
JOIN information_schema.tables AS t
  ON t.table_schema = c.table_schema AND t.table_name = c.table_name
 AND t.table_type = 'BASE TABLE'
LEFT JOIN pg_attribute AS a
  ON a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass
 AND a.attname = c.column_name
LEFT JOIN pg_index AS i ON i.indrelid = a.attrelid AND a.attnum = ANY (i.indkey)
WHERE c.table_schema = current_schema()
  AND c.data_type IN ('text', 'character varying', 'json', 'jsonb')
GROUP BY c.table_name, c.column_name, c.ordinal_position
ORDER BY c.table_name, c.ordinal_position
"""
_PRIMARY = """
SELECT a.attname FROM pg_index AS i
JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
WHERE i.indrelid = %s::regclass AND i.indisprimary
ORDER BY array_position(i.indkey, a.attnum)
"""


class PostgresPurge(Purge):
    """Purge on PostgreSQL: one transaction on a pooled connection, then VACUUM FULL on a
    connection of its own (it cannot run in a transaction)."""

    url: str

    def _text_columns(self, conn: psycopg.Connection) -> list[Column]:
        found: list[Column] = []
        keys: dict[str, tuple[str, ...]] = {}
        for table, name, primary, unique in conn.execute(_COLUMNS).fetchall():
            if table in SKIPPED:
                continue
            if table not in keys:
                keys[table] = tuple(r[0] for r in conn.execute(_PRIMARY, (table,)).fetchall())
            if not keys[table]:
                continue
            found.append(Column(table, name, keys[table], unique=bool(unique or primary)))
        return found

    def _scan(self, conn: psycopg.Connection, sql: str) -> Iterable[tuple]:
        # A server-side cursor: the rows come in batches, not all at once.
        cursor = conn.cursor(name="memvault_purge")
        cursor.itersize = 2000
        cursor.execute(sql)
        try:
            yield from cursor
        finally:
            cursor.close()

    def _lift_event_guard(self, conn: psycopg.Connection) -> None:
        conn.execute("ALTER TABLE events DISABLE TRIGGER events_are_immutable")

    def _restore_event_guard(self, conn: psycopg.Connection) -> None:
        conn.execute("ALTER TABLE events ENABLE TRIGGER events_are_immutable")

    def _documents_with_terms(self, conn: psycopg.Connection, terms: set[str]) -> set[int]:
        found: set[int] = set()
        for table in TERMS.values():
            rows = conn.execute(
                f"SELECT DISTINCT document_id FROM {table} WHERE term = ANY (%s)",
                (sorted(terms),),
            ).fetchall()
            found.update(row[0] for row in rows)
        return found

    def _drop_lexical(
        self, conn: psycopg.Connection, ids: Sequence[int], reembed: set[int]
    ) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (DOCUMENTS_LOCK,))
        (last,) = conn.execute("SELECT last_revision FROM document_totals FOR UPDATE").fetchone()
        conn.execute(
            "UPDATE documents SET content_hash = 'purged', mtime = NULL WHERE id = ANY (%s)",
            (list(ids),),
        )
        for table in TERMS.values():
            conn.execute(f"DELETE FROM {table} WHERE document_id = ANY (%s)", (list(ids),))
        for doc_id in sorted(reembed):
            last += 1
            conn.execute("UPDATE documents SET revision = %s WHERE id = %s", (last, doc_id))
        conn.execute("UPDATE document_totals SET last_revision = %s", (last,))
        conn.execute(
            "DELETE FROM document_vectors WHERE document_id = ANY (%s)", (sorted(reembed),)
        )

    def _compact(self, tables: Sequence[str]) -> None:
        touched = sorted(set(tables) | (set(TERMS.values()) if "documents" in tables else set()))
        with psycopg.connect(self.url, autocommit=True) as conn:
            for table in touched:
                conn.execute(f'VACUUM FULL "{table}"'.encode())
