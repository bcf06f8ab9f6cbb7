"""Rebuild as a part of memory: the pipeline opened for it (without the LLM when offline),
handed with the store, the vault and the index to ``pipeline.rebuild``."""

from __future__ import annotations

from memvault.config import Settings
from memvault.memory.index import Index
from memvault.pipeline.rebuild import Progress, Rebuilt, rebuild
from memvault.pipeline.service import Sources
from memvault.store import Store


class Rebuild:
    """Deriving everything again from the raw event log (``memvault rebuild``)."""

    def __init__(self, settings: Settings, store: Store, index: Index, sources: Sources) -> None:
        self.settings = settings
        self.store = store
        self.index = index
        self.sources = sources

    def run(self, *, offline: bool = False, progress: Progress | None = None) -> Rebuilt:
        """Re-derive all derived memory from the raw log; what was done, in counts.
        ``offline`` leaves any configured LLM out (extractive summaries and fragments)."""
        pipeline = self.sources.open(offline=offline)
        try:
            return rebuild(
                self.store,
                pipeline,
                vault=self.settings.vault_path,
                index_now=self.index.index_now,
                progress=progress,
            )
        finally:
            pipeline.close()
