"""The pipeline's own bookkeeping in SQLite: observation upgrades, the compression watermark,
the fragments it wrote, and resetting what it derived so it can be derived again.

Every function takes the writer's connection and runs inside one transaction, so an
upgrade and the watermark that records it land together or not at all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from memvault import jsontext
from memvault.domain import ObservationDraft, Watermark
from memvault.store.derived_part import SharedDerived

SYNTHETIC = "synthetic"

_UPGRADE = """
UPDATE observations SET type = ?, title = ?, narrative = ?, facts = ?, files = ?, concepts = ?,
    importance = ?, derived_by = ?, updated_at = ?
WHERE event_seq = ? AND session_id = ? AND derived_by = 'synthetic'
"""

_REDERIVE = """
UPDATE observations SET type = ?, title = ?, narrative = ?, facts = ?, files = ?, concepts = ?,
    importance = ?, derived_by = 'synthetic', updated_at = ?
WHERE event_seq = ? AND (type, title, narrative, facts, files, concepts, importance, derived_by)
    IS NOT (?, ?, ?, ?, ?, ?, ?, 'synthetic')
"""


def _columns(draft: ObservationDraft) -> tuple:
    return (
        draft.type,
        draft.title,
        draft.narrative,
        jsontext.dumps(draft.facts),
        jsontext.dumps(draft.files),
        jsontext.dumps(draft.concepts),
        draft.importance,
    )


def upgrade_observations(
    conn: sqlite3.Connection,
    session_id: str,
    upgrades: Sequence[tuple[int, ObservationDraft]],
    *,
    derived_by: str,
    through: Watermark,
    now: str,
) -> bool:
    """Rewrite synthetic observations in place and move the compression watermark; False
    (and nothing written) when another run already got past ``through``. An observation
    that is no longer synthetic is left as it is: an upgrade never overwrites another."""
    before = conn.execute(
        "SELECT compressed_seq FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if before is None or (before[0] or 0) >= (through.seq or 0):
        return False
    for seq, draft in upgrades:
        changed = conn.execute(
            _UPGRADE, (*_columns(draft), derived_by, now, seq, session_id)
        ).rowcount
        if changed:
            conn.execute("INSERT INTO observation_changes (event_seq) VALUES (?)", (seq,))
    conn.execute(
        "UPDATE sessions SET compressed_at = ?, compressed_seq = ? WHERE id = ?",
        (through.at, through.seq, session_id),
    )
    return True


def rederive_observations(
    conn: sqlite3.Connection, drafts: Sequence[tuple[int, ObservationDraft]], now: str
) -> int:
    """Put the synthetic observation back for each event; how many changed (only those are
    logged for re-indexing)."""
    changed = 0
    for seq, draft in drafts:
        columns = _columns(draft)
        if conn.execute(_REDERIVE, (*columns, now, seq, *columns)).rowcount:
            conn.execute("INSERT INTO observation_changes (event_seq) VALUES (?)", (seq,))
            changed += 1
    return changed


class SQLiteDerived(SharedDerived):
    """The SQLite side of the derived part: rewriting observations in place, and which
    sessions wait for compression."""

    SESSIONS_TO_COMPRESS = (
        "SELECT id FROM sessions INDEXED BY sessions_uncompressed "
        "WHERE last_event_seq > max(coalesce(compressed_seq, 0), coalesce(summarized_seq, 0)) "
        "ORDER BY last_received_at LIMIT ?"
    )

    _upgrade = staticmethod(upgrade_observations)
    _rederive = staticmethod(rederive_observations)
