"""The derived part's PostgreSQL side: the change log replicas follow, putting an
observation back, and which sessions wait for compression (the rest is
``store.derived_part``), each in the caller's transaction."""

from __future__ import annotations

import psycopg

from memvault.store.derived_part import SharedDerived
from memvault.store.postgres.append import OBSERVATION_CHANGES_LOCK, without_nul


class PostgresDerived(SharedDerived):
    """The PostgreSQL side of the derived part (the partial index sessions_uncompressed
    finds the sessions waiting for compression)."""

    REDERIVE = """
UPDATE observations SET type = %s, title = %s, narrative = %s, facts = %s, files = %s,
    concepts = %s, importance = %s, derived_by = 'synthetic', updated_at = %s
WHERE event_seq = %s AND (type, title, narrative, facts, files, concepts, importance, derived_by)
    IS DISTINCT FROM (%s, %s, %s, %s, %s, %s, %s::integer, 'synthetic')
"""
    SESSIONS_TO_COMPRESS = (
        "SELECT id FROM sessions "
        "WHERE last_event_seq > greatest(coalesce(compressed_seq, 0), coalesce(summarized_seq, 0)) "
        "ORDER BY last_received_at LIMIT %s"
    )

    _observation_text = staticmethod(without_nul)

    def _log_changes(self, conn: psycopg.Connection, seqs: list[int]) -> None:
        """Its ids are drawn under an advisory lock held to commit, so they become visible
        in id order and a follower reading past an id never misses one committed later."""
        if not seqs:
            return
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (OBSERVATION_CHANGES_LOCK,))
        last = conn.execute(
            "UPDATE sequences SET value = value + %s WHERE name = 'observation_changes' "
            "RETURNING value",
            (len(seqs),),
        ).fetchone()[0]
        ids = list(range(last - len(seqs) + 1, last + 1))
        conn.execute(
            "INSERT INTO observation_changes (id, event_seq) "
            "SELECT * FROM unnest(%s::bigint[], %s::bigint[])",
            (ids, seqs),
        )
