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


def observation_changes(conn: psycopg.Connection, after: int, limit: int) -> list[tuple[int, int]]:
    rows = conn.execute(
        "SELECT id, event_seq FROM observation_changes WHERE id > %s ORDER BY id LIMIT %s",
        (after, limit),
    ).fetchall()
    return [(row[0], row[1]) for row in rows]


def sessions_to_compress(conn: psycopg.Connection, limit: int) -> list[str]:
    """Sessions with events past both their compression and summary watermarks, quietest
    first (the partial index sessions_uncompressed)."""
    rows = conn.execute(
        "SELECT id FROM sessions "
        "WHERE last_event_seq > greatest(coalesce(compressed_seq, 0), coalesce(summarized_seq, 0)) "
        "ORDER BY last_received_at LIMIT %s",
        (limit,),
    )
    return [row[0] for row in rows]


def record_fragment(conn: psycopg.Connection, path: str, sha256: str, now: str) -> None:
    conn.execute(
        "INSERT INTO pipeline_fragments (path, sha256, updated_at) VALUES (%s, %s, %s) "
        "ON CONFLICT (path) DO UPDATE SET sha256 = excluded.sha256, "
        "updated_at = excluded.updated_at",
        (path, sha256, now),
    )


def reset_derived(conn: psycopg.Connection) -> None:
    """Forget summaries, extraction and compression progress, so the pipeline derives them
    again from the raw log. The graph has its own reset."""
    conn.execute("DELETE FROM session_summaries")
    conn.execute("DELETE FROM pipeline_results")
    conn.execute(
        "UPDATE sessions SET summarized_at = NULL, summarized_seq = NULL, summary_revision = 0, "
        "summarized_observation_count = 0, extracted_at = NULL, extracted_seq = NULL, "
        "compressed_at = NULL, compressed_seq = NULL, last_sweep_attempt_at = NULL"
    )
    conn.execute("DELETE FROM jobs WHERE state IN ('pending', 'running')")


def keep_result(
    conn: psycopg.Connection, kind: str, session_id: str, through: int, result: str, now: str
) -> None:
    conn.execute(
        "INSERT INTO pipeline_results (kind, session_id, through, result, created_at) "
        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (kind, session_id, through, result, now),
    )


def kept_result(conn: psycopg.Connection, kind: str, session_id: str, through: int) -> str | None:
    row = conn.execute(
        "SELECT result FROM pipeline_results WHERE kind = %s AND session_id = %s AND through = %s",
        (kind, session_id, through),
    ).fetchone()
    return row[0] if row else None


def drop_results(conn: psycopg.Connection, kind: str, session_id: str) -> None:
    conn.execute(
        "DELETE FROM pipeline_results WHERE kind = %s AND session_id = %s", (kind, session_id)
    )


def forget_events(conn: psycopg.Connection, event_ids: Sequence[str], now: str) -> None:
    ids = list(event_ids)
    if ids:
        conn.execute(
            "INSERT INTO forgotten_events (event_id, forgotten_at) "
            "SELECT unnest(%s::text[]), %s ON CONFLICT DO NOTHING",
            (ids, now),
        )


def forgotten(conn: psycopg.Connection, event_ids: Sequence[str]) -> set[str]:
    ids = list(event_ids)
    if not ids:
        return set()
    rows = conn.execute(
        "SELECT event_id FROM forgotten_events WHERE event_id = ANY(%s::text[])", (ids,)
    )
    return {row[0] for row in rows}
