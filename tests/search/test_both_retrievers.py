"""Every candidate is weighed by both retrievers: a document the words find is also weighed
by how close its vector is to the request, even when it is not among the documents nearest
in meaning (the semantic pool holds only the closest ``CANDIDATES``). Before, such a
document counted as if it had no likeness at all, and a request whose vector was close to
a hundred other things (a build log pasted whole) lost the one session its words named.

Through a real ``Memory`` with vectors from an OpenAI-compatible endpoint on loopback that
embeds a text as its bag of words (tests/embeddings/conftest.py)."""

from __future__ import annotations

import numpy as np
import pytest

from memvault import Memory
from memvault.search.engine import CANDIDATES
from tests.embeddings.conftest import EmbeddingServer, bag_of_words

REQUEST = "restore succeeded build failed ZephyrQueue"
# What every pasted build log says: close in meaning to the request, without its rare word.
LOG = "restore succeeded build failed"


@pytest.fixture
def memory(tmp_path):
    with (
        EmbeddingServer() as server,
        Memory.open(
            home=tmp_path / "home", embeddings="openai", embedding_url=server.base_url, llm="none"
        ) as opened,
    ):
        yield opened


def prompt(session: str, text: str, day: int) -> dict:
    return {
        "hookType": "prompt_submit",
        "sessionId": session,
        "eventId": f"{session}:0",
        "project": "blast",
        "cwd": "/src/blast",
        "timestamp": f"2026-11-{day:02d}T10:00:00.000Z",
        "data": {"prompt": text},
    }


def cosine(a: str, b: str) -> float:
    x, y = bag_of_words(a), bag_of_words(b)
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


def test_a_word_match_outside_the_semantic_pool_is_weighed_by_its_likeness(memory):
    # Both name the request's rare word once, in texts of one length: the words cannot
    # tell them apart. "near" shares more of the request's other words than "far" does.
    near, far = "ZephyrQueue build failed twice", "ZephyrQueue lunch menu printed"
    assert cosine(REQUEST, near) > cosine(REQUEST, far)
    logs = [prompt(f"log{n}", f"{LOG} log{n}", 1 + n % 20) for n in range(CANDIDATES + 20)]
    memory.capture.observe_many(
        [*logs, prompt("near", near, 21), prompt("far", far, 22)]  # far is the newer
    )
    memory.index.semantic.warm()
    memory.index.index_now()
    closest = memory.index.semantic.search(
        REQUEST, kinds=["observation"], limit=CANDIDATES, allowed=None
    )
    pooled = {d.session_id for d in memory.store.documents([i for i, _ in closest]).values()}
    assert not pooled & {"near", "far"}  # neither is among the nearest in meaning

    hits = memory.search(REQUEST, kinds=["observation"], project="blast", limit=30)
    by_session = {h.document.session_id: h for h in hits}
    for session, text in (("near", near), ("far", far)):
        assert by_session[session].semantic == pytest.approx(cosine(REQUEST, text), abs=0.02)
    # Newer, and as good a word match, "far" ranked first while neither had a likeness.
    ranked = [h.document.session_id for h in hits if h.document.session_id in {"near", "far"}]
    assert ranked == ["near", "far"]


def test_the_prompt_block_search_weighs_them_the_same(memory):
    near = "ZephyrQueue build failed twice"
    logs = [prompt(f"log{n}", f"{LOG} log{n}", 1 + n % 20) for n in range(CANDIDATES + 20)]
    memory.capture.observe_many([*logs, prompt("near", near, 21)])
    memory.index.semantic.warm()
    memory.index.index_now()
    found = memory.index.searcher.find(REQUEST, {"observation": 10}, project="blast")
    hit = next(h for h in found["observation"] if h.document.session_id == "near")
    assert hit.semantic == pytest.approx(cosine(REQUEST, near), abs=0.02)
