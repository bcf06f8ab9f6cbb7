"""Search while a backlog is embedded: a document the embedder has not reached yet is
weighed as alike as a typical candidate, not as one with no likeness at all."""

from __future__ import annotations

from memvault import Memory
from memvault.search.ranking import fuse
from tests.embeddings.test_memory_with_an_endpoint import observe


def test_a_document_waiting_for_its_vector_is_ranked_by_its_words(tmp_path, embedding_server):
    endpoint = embedding_server.base_url
    with Memory.open(home=tmp_path / "h", embeddings="openai", embedding_url=endpoint) as memory:
        for n, older in enumerate(["rotate the signing keys", "the signing keys expire"], 1):
            observe(memory, n, older)
        memory.index.index_now()  # both embedded
        observe(memory, 3, "rotate the signing keys of staging before the release")
        memory.index.index_now(vectors=False)  # found by its words, its vector to come
        assert memory.index.semantic.pending() > 0
        hits = memory.search(
            "rotate the signing keys of staging before the release", kinds=["observation"]
        )
        # Every word of the request is in the newest; counted as alike as nothing, it
        # ranked below both older ones, which hold half of them and have vectors.
        assert [hit.document.event_ids for hit in hits] == [["e3"], ["e1"], ["e2"]]
        assert hits[0].semantic is None  # its likeness is not known, not made up
        memory.index.index_now()
        assert memory.index.semantic.pending() == 0
        again = memory.search(
            "rotate the signing keys of staging before the release", kinds=["observation"]
        )
        assert again[0].document.event_ids == ["e3"] and again[0].semantic is not None


def test_a_pending_document_is_weighed_as_alike_as_the_median_word_candidate():
    lexical = [(1, 10.0), (2, 10.0), (3, 4.0), (5, 5.0)]
    semantic = [(1, 0.8), (5, 0.2), (4, 0.6)]
    relevance, _, cosine = fuse(lexical, semantic, pending={2})
    assert relevance[2] == 0.5 * 1.0 + 0.5 * 0.5  # the median of 0.8 and 0.2
    assert relevance[3] == 0.5 * 0.4  # no vector to come (a tool call): its words alone
    assert 2 not in cosine and relevance[4] == 0.5 * 0.6
    assert fuse(lexical, semantic)[0][2] == 0.5  # nothing pending: as before
    # No word candidate has a vector yet: the median of what the vectors found.
    alone, _, _ = fuse([(2, 10.0)], [(4, 0.6)], pending={2})
    assert alone[2] == 0.5 + 0.5 * 0.6
