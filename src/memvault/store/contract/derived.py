"""The derived part: what the pipeline derived from the log, rebuildable from it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from memvault.domain import ObservationDraft, Watermark


class Derived(ABC):
    """What the pipeline derived from the log: summaries, compressed observations, the
    fragment files it wrote, kept LLM answers, forgotten events. Rebuildable from the log."""

    @abstractmethod
    def session_summary(self, session_id: str) -> tuple[dict, int] | None:
        """The stored summary of a session and its revision."""

    @abstractmethod
    def write_summary(
        self, session_id: str, summary: dict, *, through: Watermark, observations: int
    ) -> bool:
        """Store a session's new summary and move its summary watermark to ``through``, in
        one transaction; False (nothing written) if the watermark moved meanwhile."""

    @abstractmethod
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
        False, writing nothing, when the watermark is already there."""

    @abstractmethod
    def rederive_observations(self, drafts: Sequence[tuple[int, ObservationDraft]]) -> int:
        """Put back the synthetic observation of each event; how many changed."""

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
