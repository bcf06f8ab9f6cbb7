"""What a vector reads, through Memory: a long request's query vector reads its head; a
store whose vectors read whole texts (under the name before the cut) is embedded again, a
batch at a time, while search answers."""

from __future__ import annotations

from memvault import Memory
from memvault.embeddings.window import GENEROUS_CHARS_PER_TOKEN, QUERY_TOKENS
from memvault.search.vectors import to_blob
from tests.embeddings.conftest import bag_of_words, require_packaged_model
from tests.embeddings.test_memory_with_an_endpoint import observe

# The packaged model's name while its vectors read every window of a long text, averaged.
WHOLE_TEXT_NAME = "local:multilingual-e5-small-q4-c1"


def test_a_long_request_is_embedded_as_its_head(tmp_path, embedding_server):
    settings = {"embeddings": "openai", "embedding_url": embedding_server.base_url}
    request = "why does the signing key rotation fail " + "at line 42 of the log " * 1000
    with Memory.open(home=tmp_path / "h", **settings) as memory:
        observe(memory, 1, "rotate the signing keys")
        memory.index.semantic.warm()
        memory.index.index_now()
        embedding_server.requests.clear()
        hits = memory.search(request, kinds=["observation"])
        assert hits and hits[0].document.event_ids == ["e1"]
    (sent,) = [body["input"] for _, _, body in embedding_server.requests]
    assert len(sent) == 1 and request.startswith(sent[0])
    assert len(sent[0]) <= QUERY_TOKENS * GENEROUS_CHARS_PER_TOKEN < len(request) // 10


def test_vectors_of_whole_texts_are_replaced_a_batch_at_a_time(tmp_path):
    """A store embedded before the cut holds vectors under the old name: the packaged model
    counts every document as waiting, embeds them in batches (search answering from the
    words, and from the vectors made so far, meanwhile) and replaces the old vectors."""
    require_packaged_model()
    home = tmp_path / "h"
    with Memory.open(home=home, embeddings="none") as before:
        for n, text in enumerate(["rotate the signing keys", "bump the lockfile", "fix CI"]):
            observe(before, n, text)
        before.index.index_now()
        rows = before.store.documents_to_embed(0, limit=100)
        # What the version before the cut wrote: its vectors, its cursor, its claim.
        vectors = [
            (doc, revision, to_blob(bag_of_words(text, 384))) for doc, revision, text in rows
        ]
        before.store.write_vectors(
            WHOLE_TEXT_NAME, vectors, cursor=(f"vectors:{WHOLE_TEXT_NAME}", rows[-1][1])
        )
        for cursor in ("vectors:model-changes", f"vectors-claimed:{WHOLE_TEXT_NAME}"):
            before.store.write_vectors(WHOLE_TEXT_NAME, [], cursor=(cursor, 1))
    with Memory.open(home=home, embeddings="local") as after:
        semantic = after.index.semantic
        assert semantic.model != WHOLE_TEXT_NAME
        assert semantic.pending() == len(rows)
        assert semantic.embed_pending(batch=1) == 1
        assert semantic.pending() == len(rows) - 1
        words = after.search("signing keys", kinds=["observation"])
        assert words[0].document.event_ids == ["e0"]  # words still find it
        while semantic.embed_pending(batch=1):
            pass
        assert semantic.pending() == 0
        assert after.store.vectors(WHOLE_TEXT_NAME) == []  # one vector a document: replaced
        assert len(after.store.vectors(semantic.model)) == len(rows)
        hits = after.search("cryptographic credentials renewal", kinds=["observation"])
        assert hits[0].document.event_ids == ["e0"] and hits[0].semantic is not None
