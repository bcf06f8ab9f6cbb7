"""What a result's relevance depends on: its own match, not its session's other results."""

from __future__ import annotations

import pytest

from memvault import Memory
from memvault.search.ranking import RELEVANCE_ONLY, fuse

FILLER = ["Order lunch for the team", "The weather is grey today", "Coffee machine is fixed"]


def turn(memory: Memory, session: str, n: int, text: str) -> None:
    memory.observe(
        {
            "hookType": "prompt_submit",
            "sessionId": session,
            "project": "demo",
            "cwd": "/code/demo",
            "timestamp": f"2026-11-30T10:00:{n:02d}.000Z",
            "eventId": f"{session}-{n}",
            "data": {"prompt": text},
        }
    )


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home", embeddings="none") as memory:
        yield memory


def test_a_result_is_not_lifted_by_a_better_match_elsewhere_in_its_session(memory):
    # Session a: a strong match, then (beyond the context window) a weak one. Session b:
    # the same weak one alone. Cross-validated on LoCoMo, lifting results of a session
    # that matched well gained nothing beyond noise (docs/benchmarks.md), so it is off.
    turn(memory, "a", 1, "Rotate the alpha signing keys before the beta launch")
    for n, text in enumerate(FILLER, 2):
        turn(memory, "a", n, text)
    turn(memory, "a", 5, "beta notes")
    for n, text in enumerate(FILLER, 1):
        turn(memory, "b", n, text)
    turn(memory, "b", 4, "beta notes")
    hits = memory.search("alpha beta", kinds=["observation"], weights=RELEVANCE_ONLY)
    relevance = {hit.document.event_ids[0]: hit.relevance for hit in hits}
    # Both weak ones have the same text, and the same neighbours as context.
    assert relevance["a-5"] == pytest.approx(relevance["b-4"])
    assert relevance["a-1"] > relevance["a-5"]


def test_relevance_stays_within_zero_and_one_whatever_the_retrievers_give():
    # A cosine from int8 rows may come out a hair past 1, or below 0 for an opposite text.
    relevance, shares, cosine = fuse([(1, 8.0), (2, 2.0)], [(1, 1.0009), (3, -0.2)])
    assert shares == {1: 1.0, 2: 0.25} and cosine == {1: 1.0, 3: 0.0}
    assert relevance == {1: 1.0, 2: 0.125, 3: 0.0}
    alone, _, _ = fuse([], [(4, 1.0009)])
    assert alone == {4: 1.0}
