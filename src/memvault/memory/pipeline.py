"""The pipeline as memory holds it: opened on first use, and run in the background only
while this replica writes the vault."""

from __future__ import annotations

from memvault.background import Pacer
from memvault.pipeline.service import Pipeline, Sources


class LazyPipeline:
    """The pipeline, opened on first use: it opens the configured LLM, whose SDK takes most
    of a second to import, and a provider set up wrong is an error only the commands that
    process events should meet."""

    def __init__(self, sources: Sources, pacer: Pacer) -> None:
        self.sources = sources
        self.pacer = pacer
        self.opened: Pipeline | None = None
        self.running = False

    def get(self) -> Pipeline:
        if self.opened is None:
            self.opened = self.sources.open(pacer=self.pacer)
        return self.opened

    def start(self) -> None:
        """Process captured events in the background (the server does this)."""
        if not self.running:
            self.get().worker.start()
            self.running = True

    def stop(self) -> None:
        if self.running:
            self.get().worker.stop()
            self.running = False

    def turn_ended(self, session_id: str) -> None:
        """A turn ended in a stored event: the running pipeline brings its summary up to
        date (a process that runs none leaves it to the one that does)."""
        if self.running:
            self.get().turn_ended(session_id)

    def close(self) -> None:
        if self.opened is not None:
            self.opened.close()
