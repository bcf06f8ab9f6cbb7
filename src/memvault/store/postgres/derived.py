"""The pipeline's own bookkeeping in PostgreSQL: observation upgrades, the compression
watermark, the fragments it wrote, kept LLM answers, and resetting what it derived.

Every function runs inside the caller's transaction, so an upgrade and the watermark that
records it land together or not at all. A watermark moves by a conditional update of the
session's row, which holds that row's lock until commit: two replicas running the same
session's step cannot both move it.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from memvault import jsontext
from memvault.domain import ObservationDraft, Watermark
from memvault.store.derived_part import SharedDerived
from memvault.store.postgres.append import OBSERVATION_CHANGES_LOCK, without_nul

_UPGRADE = """
UPDATE observations SET type = %s, title = %s, narrative = %s, facts = %s, files = %s,
    concepts = %s, importance = %s, derived_by = %s, updated_at = %s
WHERE event_seq = %s AND session_id = %s AND derived_by = 'synthetic'
"""

_REDERIVE = """
UPDATE observations SET type = %s, title = %s, narrative = %s, facts = %s, files = %s,
    concepts = %s, importance = %s, derived_by = 'synthetic', updated_at = %s
WHERE event_seq = %s AND (type, title, narrative, facts, files, concepts, importance, derived_by)
    IS DISTINCT FROM (%s, %s, %s, %s, %s, %s, %s::integer, 'synthetic')
"""


def _columns(draft: ObservationDraft) -> tuple:
    return (
        draft.type,
        without_nul(draft.title),
        without_nul(draft.narrative),
        jsontext.dumps(draft.facts),
        jsontext.dumps(draft.files),
        jsontext.dumps(draft.concepts),
        draft.importance,
    )


def _log_changes(conn: psycopg.Connection, seqs: list[int]) -> None:
    """Append rewritten observations to the change log. Its ids are drawn under an advisory
    lock held to commit, so they become visible in id order and a follower reading past an
    id never misses one committed later."""
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


def upgrade_observations(
    conn: psycopg.Connection,
    session_id: str,
    upgrades: Sequence[tuple[int, ObservationDraft]],
    *,
    derived_by: str,
    through: Watermark,
    now: str,
) -> bool:
    """Rewrite synthetic observations in place and move the compression watermark; False
    (and nothing written) when another run already got past ``through``."""
    moved = conn.execute(
        "UPDATE sessions SET compressed_at = %s, compressed_seq = %s "
        "WHERE id = %s AND coalesce(compressed_seq, 0) < %s",
        (through.at, through.seq, session_id, through.seq or 0),
    ).rowcount
    if not moved:
        return False
    changed = []
    for seq, draft in upgrades:
        cursor = conn.execute(_UPGRADE, (*_columns(draft), derived_by, now, seq, session_id))
        if cursor.rowcount:
            changed.append(seq)
    _log_changes(conn, changed)
    return True


def rederive_observations(
    conn: psycopg.Connection, drafts: Sequence[tuple[int, ObservationDraft]], now: str
) -> int:
    """Put the synthetic observation back for each event; how many changed (only those are
    logged for re-indexing)."""
    changed = []
    for seq, draft in drafts:
        columns = _columns(draft)
        if conn.execute(_REDERIVE, (*columns, now, seq, *columns)).rowcount:
            changed.append(seq)
    _log_changes(conn, changed)
    return len(changed)


class PostgresDerived(SharedDerived):
    """The PostgreSQL side of the derived part: rewriting observations in place, and which
    sessions wait for compression (the partial index sessions_uncompressed)."""

    SESSIONS_TO_COMPRESS = (
        "SELECT id FROM sessions "
        "WHERE last_event_seq > greatest(coalesce(compressed_seq, 0), coalesce(summarized_seq, 0)) "
        "ORDER BY last_received_at LIMIT %s"
    )

    _upgrade = staticmethod(upgrade_observations)
    _rederive = staticmethod(rederive_observations)
