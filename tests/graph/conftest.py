"""Sessions for graph tests, ingested the way the server ingests them, into a real store."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memvault.domain import Event, Observation
from tests.pipeline.sessions import conversation

Session = tuple[list[Event], list[Observation]]


@pytest.fixture
def ingest(memory) -> Callable[..., Session]:
    """Observe a conversation's steps as session ``name``; its events and observations."""

    def run(name: str, steps: list[tuple[str, dict]], **options) -> Session:
        result = memory.observe_many(conversation(name, steps, **options))
        assert result.failed == 0, result.errors
        return memory.reads.events(name), memory.reads.observations(name)

    return run
