"""The derived part: what the pipeline derived from the log, rebuildable from it.

Rewriting observations is written here once for both engines; each engine says how a
change is logged (``_log_changes``) and how an observation is compared when put back
(``REDERIVE``). The rest of the part is in ``store.derived_part``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from memvault import jsontext
from memvault.domain import ObservationDraft, Watermark, iso, utc_now
from memvault.store.engine import Engine

# Rewrites a still-synthetic observation in place (parameters: the draft's columns, who
# derived it, the time, the event, the session).
UPGRADE = """
UPDATE observations SET type = ?, title = ?, narrative = ?, facts = ?, files = ?, concepts = ?,
    importance = ?, derived_by = ?, updated_at = ?
WHERE event_seq = ? AND session_id = ? AND derived_by = 'synthetic'
"""


class Derived(Engine, ABC):
    """What the pipeline derived from the log: summaries, compressed observations, the
    fragment files it wrote, kept LLM answers, forgotten events. Rebuildable from the log."""

    # The engine's statement putting a synthetic observation back where it differs
    # (parameters: the draft's columns, the time, the event, the draft's columns again).
    REDERIVE: str

    @abstractmethod
    def _log_changes(self, conn, seqs: list[int]) -> None:
        """Append the events of rewritten observations to the change log followers read,
        in the caller's transaction."""

    def _observation_text(self, value: str) -> str:
        """A title or narrative as the engine can hold it."""
        return value

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

    @abstractmethod
    def session_summary(self, session_id: str) -> tuple[dict, int] | None:
        """The stored summary of a session and its revision."""

    @abstractmethod
    def write_summary(
        self, session_id: str, summary: dict, *, through: Watermark, observations: int
    ) -> bool:
        """Store a session's new summary and move its summary watermark to ``through``, in
        one transaction; False (nothing written) if the watermark moved meanwhile."""

    def upgrade_observations(
        self,
        session_id: str,
        upgrades: Sequence[tuple[int, ObservationDraft]],
        *,
        derived_by: str,
        through: Watermark,
    ) -> bool:
        """Rewrite still-synthetic observations in place (each keyed by its event's sequence)
        and move the session's compression watermark to ``through``, in one transaction;
        False, writing nothing, when the watermark is already there.

        The watermark moves first, by a conditional update that holds the session's row
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
        """Put back the synthetic observation of each event; how many changed."""
        now = iso(utc_now())
        rows = [(*self._columns(draft), now, seq, *self._columns(draft)) for seq, draft in drafts]
        rederive = self._sql(self.REDERIVE)

        def op(conn) -> int:
            changed = [row[8] for row in rows if conn.execute(rederive, row).rowcount]
            self._log_changes(conn, changed)  # only those are indexed again
            return len(changed)

        return self._writing(op)

    @abstractmethod
    def record_pipeline_fragment(self, path: str, sha256: str) -> None:
        """Remember the content the pipeline left in a fragment file (vault-relative path)."""

    @abstractmethod
    def pipeline_fragment(self, path: str) -> str | None:
        """The sha256 of what the pipeline left in this fragment file, if it wrote it."""

    @abstractmethod
    def pipeline_fragments(self) -> dict[str, str]:
        """Every fragment file the pipeline wrote, with the sha256 of what it left there."""

    @abstractmethod
    def forget_pipeline_fragments(self, paths: Sequence[str]) -> None:
        """Stop tracking these fragment files."""

    @abstractmethod
    def keep_result(self, kind: str, session_id: str, through: int, result: str) -> None:
        """Keep what an LLM answered for a run that ends at event ``through``, until the
        run's watermark moves (``advance_extraction`` drops it)."""

    @abstractmethod
    def kept_result(self, kind: str, session_id: str, through: int) -> str | None:
        """The answer kept for this run, if it ran before and did not finish."""

    @abstractmethod
    def forget_events(self, event_ids: Sequence[str]) -> None:
        """Note that the fragment learned from these events was forgotten."""

    @abstractmethod
    def forgotten_events(self, event_ids: Sequence[str]) -> set[str]:
        """Which of these event ids a forgotten fragment was learned from."""

    @abstractmethod
    def reset_derived(self) -> None:
        """Drop session summaries and the summary, extraction and compression watermarks,
        and queued jobs, so the pipeline derives everything again from the raw log."""
