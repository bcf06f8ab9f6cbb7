"""A session told only because a hit of it is close in meaning to the request is judged by
its rivals in meaning (search/focus.py): a build log pasted as a request is close to every
build log pasted before, whatever it is about, and the one ranked first is no answer.

Through a real ``Memory`` with vectors from an OpenAI-compatible endpoint on loopback that
embeds a text as its bag of words: the build logs share most of their words, so they are
close to one another, while the words that say what each is about are their own."""

from __future__ import annotations

import pytest

from memvault import Memory
from memvault.search import focus
from tests.context.test_focus import told_sessions as told
from tests.embeddings.conftest import EmbeddingServer

# What every build log says, and what says which failure it is.
LOG = "restore complete core succeeded build failed elapsed debug warnings"
FAILURES = {
    "b1": "ParserTests InvalidToken",
    "b2": "HasherTests CollisionCount",
    "b3": "DifferTests ColumnWidth",
    "b4": "MergerTests ConflictMarker",
}
REQUEST = f"{LOG} BatchManagerTests ResetForTesting BlastAppData TempDirectory"


@pytest.fixture
def server():
    with EmbeddingServer() as running:
        yield running


def remembered(tmp_path, server, sessions: list[str]) -> Memory:
    memory = Memory.open(
        home=tmp_path / "home", embeddings="openai", embedding_url=server.base_url, llm="none"
    )
    memory.capture.observe_many(
        [
            {
                "hookType": "prompt_submit",
                "sessionId": session,
                "eventId": f"{session}:0",
                "project": "blast",
                "cwd": "/src/blast",
                "timestamp": f"2026-11-2{n}T10:00:00.000Z",
                "data": {"prompt": f"{LOG} {FAILURES[session]}"},
            }
            for n, session in enumerate(sessions)
        ]
    )
    memory.index.semantic.warm()
    memory.index.index_now()
    return memory


def test_a_request_close_in_meaning_to_many_sessions_alone_is_told_none_of_them(tmp_path, server):
    with remembered(tmp_path, server, ["b1", "b2", "b3"]) as memory:
        found = memory.context.index.searcher.find(REQUEST, {"observation": 10}, project="blast")
        close = [h for h in found["observation"] if (h.semantic or 0) >= focus.COSINE]
        assert len(close) == 3  # each build log is close in meaning to the request
        packed = memory.context.context(project="blast", query=REQUEST, session_id="asking")
        assert told(memory, packed) == set()


def test_a_request_close_to_fewer_sessions_is_told_the_closest(tmp_path, server):
    with remembered(tmp_path, server, ["b1", "b2"]) as memory:
        packed = memory.context.context(project="blast", query=REQUEST, session_id="asking")
        assert len(told(memory, packed)) == 1
