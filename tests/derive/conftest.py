"""Sessions for the derivations' tests, ingested the way the server ingests them: envelopes
go through ``Memory.observe_many`` into a real SQLite store and are read back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memvault.domain import Event, Observation
from tests.helpers import fixtures_dir
from tests.pipeline.sessions import conversation

Session = tuple[list[Event], list[Observation]]


@pytest.fixture
def ingest(memory) -> Callable[[list[dict]], Session]:
    """Observe envelopes; the events and observations of the first one's session."""

    def run(envelopes: list[dict]) -> Session:
        result = memory.observe_many(envelopes)
        assert result.failed == 0, result.errors
        session_id = envelopes[0]["sessionId"]
        return memory.reads.events(session_id), memory.reads.observations(session_id)

    return run


@pytest.fixture
def ingest_steps(ingest) -> Callable[..., Session]:
    """Observe a conversation's steps as session ``name``; its events and observations."""

    def run(name: str, steps: list[tuple[str, dict]], **options) -> Session:
        return ingest(conversation(name, steps, **options))

    return run


@pytest.fixture
def fixtures() -> Path:
    return fixtures_dir()
