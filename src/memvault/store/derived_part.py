"""What the pipeline derived, written once for both engines: the observation change log a
follower reads, the fragment files it wrote, kept LLM answers, forgotten events, and
resetting it all so it is derived again from the raw log.

Rewriting observations is the contract part's own (``contract.derived``). How a change is
logged, how an observation is compared when put back and which sessions wait for
compression each engine says itself, in its ``derived`` module.
"""

from __future__ import annotations

from collections.abc import Sequence

from memvault.domain import iso, utc_now
from memvault.store.contract import Derived


class SharedDerived(Derived):
    """The derived part of each store."""

    SESSIONS_TO_COMPRESS: str

    def observation_changes(self, after: int, *, limit: int) -> list[tuple[int, int]]:
        rows = self._select(
            "SELECT id, event_seq FROM observation_changes WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit),
        )
        return [(row[0], row[1]) for row in rows]

    def observation_changes_since(self, after: int) -> int:
        # A range of the primary key: as long as the backlog, not the table.
        rows = self._select("SELECT count(*) FROM observation_changes WHERE id > ?", (after,))
        return rows[0][0] if rows else 0

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
