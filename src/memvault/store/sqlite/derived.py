"""The derived part's SQLite side: the change log, putting an observation back, and which
sessions wait for compression (the rest is ``store.derived_part``), on the writer's
connection, in one transaction with the rewrite that logs them."""

from __future__ import annotations

import sqlite3

from memvault.store.derived_part import SharedDerived


class SQLiteDerived(SharedDerived):
    """The change log's ids are SQLite's: one writer draws them in order."""

    REDERIVE = """
UPDATE observations SET type = ?, title = ?, narrative = ?, facts = ?, files = ?, concepts = ?,
    importance = ?, derived_by = 'synthetic', updated_at = ?
WHERE event_seq = ? AND (type, title, narrative, facts, files, concepts, importance, derived_by)
    IS NOT (?, ?, ?, ?, ?, ?, ?, 'synthetic')
"""
    SESSIONS_TO_COMPRESS = (
        "SELECT id FROM sessions INDEXED BY sessions_uncompressed "
        "WHERE last_event_seq > max(coalesce(compressed_seq, 0), coalesce(summarized_seq, 0)) "
        "ORDER BY last_received_at LIMIT ?"
    )

    def _log_changes(self, conn: sqlite3.Connection, seqs: list[int]) -> None:
        sql = "INSERT INTO observation_changes (event_seq) VALUES {rows}"
        self._write_rows(conn, sql, [(seq,) for seq in seqs], each="(?)")
