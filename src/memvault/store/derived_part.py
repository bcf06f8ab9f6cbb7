"""What the pipeline derived, written once for both engines: the observation change log a
follower reads, the fragment files it wrote, kept LLM answers, forgotten events, and
resetting it all so it is derived again from the raw log.

How a change is logged, how an observation is compared when put back and which sessions
wait for compression each engine says itself, in its ``derived`` module.
"""

from __future__ import annotations

from collections.abc import Sequence

from memvault import jsontext
from memvault.domain import ObservationDraft, Watermark, iso, utc_now
from memvault.store.contract import Derived
from memvault.store.engine import Engine

# Rewrites a still-synthetic observation in place (parameters: the draft's columns, who
# derived it, the time, the event, the session).
UPGRADE = """
UPDATE observations SET type = ?, title = ?, narrative = ?, facts = ?, files = ?, concepts = ?,
    importance = ?, derived_by = ?, updated_at = ?
WHERE event_seq = ? AND session_id = ? AND derived_by = 'synthetic'
"""


class SharedDerived(Engine, Derived):
    """The derived part of each store."""

    SESSIONS_TO_COMPRESS: str

    # The engine's statement putting a synthetic observation back where it differs
    # (parameters: the draft's columns, the time, the event, the draft's columns again).
    REDERIVE: str

    def _observation_text(self, value: str) -> str:
        """A title or narrative as the engine can hold it."""
        return value

    def _log_changes(self, conn, seqs: list[int]) -> None:
        """Append the events of rewritten observations to the change log followers read,
        in the caller's transaction."""
        raise NotImplementedError

    def _columns(self, draft: ObservationDraft) -> tuple:
        return (
            draft.type,
            self._observation_text(draft.title),
            self._observation_text(draft.narrative),
            jsontext.dumps(draft.facts),
            jsontext.dumps(draft.files),
            jsontext.dumps(draft.concepts),
            draft.importance,
        )

    def upgrade_observations(
        self,
        session_id: str,
        upgrades: Sequence[tuple[int, ObservationDraft]],
        *,
        derived_by: str,
        through: Watermark,
    ) -> bool:
        """The watermark moves first, by a conditional update that holds the session's row
        until commit: two runs of the same session's step cannot both move it. An
        observation no longer synthetic is left as it is: an upgrade never overwrites
        another."""
        now = iso(utc_now())
        rows = [
            (*self._columns(draft), derived_by, now, seq, session_id) for seq, draft in upgrades
        ]
        move = self._sql(
            "UPDATE sessions SET compressed_at = ?, compressed_seq = ? "
            "WHERE id = ? AND coalesce(compressed_seq, 0) < ?"
        )
        upgrade = self._sql(UPGRADE)

        def op(conn) -> bool:
            if not conn.execute(
                move, (through.at, through.seq, session_id, through.seq or 0)
            ).rowcount:
                return False  # another run got past ``through``: nothing written
            self._log_changes(
                conn, [row[-2] for row in rows if conn.execute(upgrade, row).rowcount]
            )
            return True

        return self._writing(op)

    def rederive_observations(self, drafts: Sequence[tuple[int, ObservationDraft]]) -> int:
        now = iso(utc_now())
        rows = [(*self._columns(draft), now, seq, *self._columns(draft)) for seq, draft in drafts]
        rederive = self._sql(self.REDERIVE)

        def op(conn) -> int:
            changed = [row[8] for row in rows if conn.execute(rederive, row).rowcount]
            self._log_changes(conn, changed)  # only those are indexed again
            return len(changed)

        return self._writing(op)

    def observation_changes(self, after: int, *, limit: int) -> list[tuple[int, int]]:
        rows = self._select(
            "SELECT id, event_seq FROM observation_changes WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit),
        )
        return [(row[0], row[1]) for row in rows]

    def sessions_to_compress(self, *, limit: int) -> list[str]:
        """Sessions with events past both their compression and summary watermarks,
        quietest first; what is summarized already is never sent to the LLM."""
        return [row[0] for row in self._select(self.SESSIONS_TO_COMPRESS, (limit,))]

    def record_pipeline_fragment(self, path: str, sha256: str) -> None:
        self._change(
            "INSERT INTO pipeline_fragments (path, sha256, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (path) DO UPDATE SET sha256 = excluded.sha256, "
            "updated_at = excluded.updated_at",
            (path, sha256, iso(utc_now())),
        )

    def pipeline_fragment(self, path: str) -> str | None:
        row = self._select_one("SELECT sha256 FROM pipeline_fragments WHERE path = ?", (path,))
        return row[0] if row else None

    def pipeline_fragments(self) -> dict[str, str]:
        return {
            row[0]: row[1] for row in self._select("SELECT path, sha256 FROM pipeline_fragments")
        }

    def forget_pipeline_fragments(self, paths: Sequence[str]) -> None:
        rows = [(path,) for path in paths]
        if rows:
            sql = "DELETE FROM pipeline_fragments WHERE path IN ({rows})"
            self._writing(lambda conn: self._write_rows(conn, sql, rows, each="?"))

    def keep_result(self, kind: str, session_id: str, through: int, result: str) -> None:
        self._change(
            "INSERT INTO pipeline_results (kind, session_id, through, result, created_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (kind, session_id, through, result, iso(utc_now())),
        )

    def kept_result(self, kind: str, session_id: str, through: int) -> str | None:
        row = self._select_one(
            "SELECT result FROM pipeline_results WHERE kind = ? AND session_id = ? AND through = ?",
            (kind, session_id, through),
        )
        return row[0] if row else None

    def forget_events(self, event_ids: Sequence[str]) -> None:
        now = iso(utc_now())
        rows = [(event_id, now) for event_id in event_ids]
        sql = "INSERT INTO forgotten_events (event_id, forgotten_at) VALUES {rows} "
        sql += "ON CONFLICT DO NOTHING"
        if rows:
            self._writing(lambda conn: self._write_rows(conn, sql, rows, each="(?, ?)"))

    def forgotten_events(self, event_ids: Sequence[str]) -> set[str]:
        sql = "SELECT event_id FROM forgotten_events WHERE event_id IN ({marks})"
        return {row[0] for row in self._select_in(sql, event_ids)}

    def reset_derived(self) -> None:
        """Forget summaries, extraction and compression progress, so the pipeline derives
        them again from the raw log. The graph has its own reset."""

        def op(conn) -> None:
            conn.execute("DELETE FROM session_summaries")
            conn.execute("DELETE FROM pipeline_results")
            conn.execute(
                "UPDATE sessions SET summarized_at = NULL, summarized_seq = NULL, "
                "summary_revision = 0, summarized_observation_count = 0, extracted_at = NULL, "
                "extracted_seq = NULL, compressed_at = NULL, compressed_seq = NULL, "
                "last_sweep_attempt_at = NULL"
            )
            conn.execute("DELETE FROM jobs WHERE state IN ('pending', 'running')")

        self._writing(op)
