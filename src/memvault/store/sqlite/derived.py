"""The pipeline's own bookkeeping in SQLite: observation upgrades, the compression watermark,
the fragments it wrote, and resetting what it derived so it can be derived again.

Every function takes the writer's connection and runs inside one transaction, so an
upgrade and the watermark that records it land together or not at all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from memvault import jsontext
from memvault.domain import ObservationDraft, Watermark, iso, utc_now
from memvault.store.sqlite.writer import Writer

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


def observation_changes(conn: sqlite3.Connection, after: int, limit: int) -> list[tuple[int, int]]:
    return conn.execute(
        "SELECT id, event_seq FROM observation_changes WHERE id > ? ORDER BY id LIMIT ?",
        (after, limit),
    ).fetchall()


def sessions_to_compress(conn: sqlite3.Connection, limit: int) -> list[str]:
    """Sessions with events past both their compression and summary watermarks, quietest
    first; what is summarized already is never sent to the LLM."""
    rows = conn.execute(
        "SELECT id FROM sessions INDEXED BY sessions_uncompressed "
        "WHERE last_event_seq > max(coalesce(compressed_seq, 0), coalesce(summarized_seq, 0)) "
        "ORDER BY last_received_at LIMIT ?",
        (limit,),
    )
    return [row[0] for row in rows]


def record_fragment(conn: sqlite3.Connection, path: str, sha256: str, now: str) -> None:
    conn.execute(
        "INSERT INTO pipeline_fragments (path, sha256, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (path) DO UPDATE SET sha256 = excluded.sha256, "
        "updated_at = excluded.updated_at",
        (path, sha256, now),
    )


def reset_derived(conn: sqlite3.Connection) -> None:
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
    conn: sqlite3.Connection, kind: str, session_id: str, through: int, result: str, now: str
) -> None:
    conn.execute(
        "INSERT INTO pipeline_results (kind, session_id, through, result, created_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (kind, session_id, through, result, now),
    )


def kept_result(conn: sqlite3.Connection, kind: str, session_id: str, through: int) -> str | None:
    row = conn.execute(
        "SELECT result FROM pipeline_results WHERE kind = ? AND session_id = ? AND through = ?",
        (kind, session_id, through),
    ).fetchone()
    return row[0] if row else None


def drop_results(conn: sqlite3.Connection, kind: str, session_id: str) -> None:
    conn.execute(
        "DELETE FROM pipeline_results WHERE kind = ? AND session_id = ?", (kind, session_id)
    )


def forget_events(conn: sqlite3.Connection, event_ids: Sequence[str], now: str) -> None:
    conn.executemany(
        "INSERT INTO forgotten_events (event_id, forgotten_at) VALUES (?, ?) "
        "ON CONFLICT DO NOTHING",
        [(event_id, now) for event_id in event_ids],
    )


def forgotten(conn: sqlite3.Connection, event_ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    ids = list(event_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT event_id FROM forgotten_events WHERE event_id IN ({marks})", chunk
        )
        found.update(row[0] for row in rows)
    return found


class SQLiteDerived:
    """The derived part of the SQLite store."""

    _writer: Writer
    _reader: Callable[[], sqlite3.Connection]

    def upgrade_observations(
        self,
        session_id: str,
        upgrades: Sequence[tuple[int, ObservationDraft]],
        *,
        derived_by: str,
        through: Watermark,
    ) -> bool:
        upgrades, now = list(upgrades), iso(utc_now())
        return self._writer.call(
            lambda conn: upgrade_observations(
                conn, session_id, upgrades, derived_by=derived_by, through=through, now=now
            )
        )

    def rederive_observations(self, drafts: Sequence[tuple[int, ObservationDraft]]) -> int:
        drafts, now = list(drafts), iso(utc_now())
        return self._writer.call(lambda conn: rederive_observations(conn, drafts, now))

    def observation_changes(self, after: int, *, limit: int) -> list[tuple[int, int]]:
        return observation_changes(self._reader(), after, limit)

    def sessions_to_compress(self, *, limit: int) -> list[str]:
        return sessions_to_compress(self._reader(), limit)

    def record_pipeline_fragment(self, path: str, sha256: str) -> None:
        now = iso(utc_now())
        self._writer.call(lambda conn: record_fragment(conn, path, sha256, now))

    def pipeline_fragment(self, path: str) -> str | None:
        row = (
            self._reader()
            .execute("SELECT sha256 FROM pipeline_fragments WHERE path = ?", (path,))
            .fetchone()
        )
        return row[0] if row else None

    def pipeline_fragments(self) -> dict[str, str]:
        return dict(self._reader().execute("SELECT path, sha256 FROM pipeline_fragments"))

    def forget_pipeline_fragments(self, paths: Sequence[str]) -> None:
        rows = [(path,) for path in paths]
        self._writer.call(
            lambda conn: conn.executemany("DELETE FROM pipeline_fragments WHERE path = ?", rows)
        )

    def keep_result(self, kind: str, session_id: str, through: int, result: str) -> None:
        now = iso(utc_now())
        self._writer.call(lambda conn: keep_result(conn, kind, session_id, through, result, now))

    def kept_result(self, kind: str, session_id: str, through: int) -> str | None:
        return kept_result(self._reader(), kind, session_id, through)

    def forget_events(self, event_ids: Sequence[str]) -> None:
        ids, now = list(event_ids), iso(utc_now())
        self._writer.call(lambda conn: forget_events(conn, ids, now))

    def forgotten_events(self, event_ids: Sequence[str]) -> set[str]:
        return forgotten(self._reader(), event_ids)

    def reset_derived(self) -> None:
        self._writer.call(reset_derived)
