"""The in-memory vector index against a plain numpy brute force, and the blob format.

Rows are held as int8 codes with a scale, so a cosine may differ from the float32 one by a
little (ATOL): a hit list matches the brute force's when every hit's score is within that
of its exact cosine and any difference of order or membership is between near ties."""

from __future__ import annotations

import struct
import threading

import numpy as np
import pytest

from memvault.search.vectors import VectorIndex, from_blob, to_blob

DIM = 24
ATOL = 0.01  # int8 rows: the largest cosine error at 24 dimensions, with room


def unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def brute_force(
    stored: dict[int, np.ndarray], query: np.ndarray, k: int, allowed: set[int] | None = None
) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """The exact top ``k``, and the exact cosine of every allowed document."""
    exact = {
        doc_id: float(unit(vector) @ unit(query))
        for doc_id, vector in stored.items()
        if allowed is None or doc_id in allowed
    }
    return sorted(exact.items(), key=lambda pair: -pair[1])[:k], exact


def assert_same_hits(
    got: list[tuple[int, float]], want: tuple[list[tuple[int, float]], dict[int, float]]
) -> None:
    """``got`` is the exact top k up to the index's rounding: as long, best first, each
    score within ATOL of its exact cosine, and any hit in one list but not the other a near
    tie (within 2·ATOL) with the exact k-th."""
    top, exact = want
    assert len(got) == len(top)
    for doc_id, score in got:
        assert score == pytest.approx(exact[doc_id], abs=ATOL)
    scores = [score for _, score in got]
    assert scores == sorted(scores, reverse=True)
    if top:
        kth = top[-1][1]
        returned, expected = {d for d, _ in got}, {d for d, _ in top}
        assert all(abs(exact[d] - kth) <= 2 * ATOL for d in returned ^ expected)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.fixture
def filled(rng):
    """An index of 3,000 random vectors (past the first capacity), and the same as a dict."""
    index = VectorIndex(DIM)
    stored: dict[int, np.ndarray] = {}
    for start in range(0, 3000, 700):
        ids = list(range(start + 1, min(start + 701, 3001)))
        vectors = rng.standard_normal((len(ids), DIM)).astype(np.float32)
        index.upsert(ids, vectors)
        stored.update(zip(ids, vectors, strict=True))
    return index, stored


def test_search_matches_brute_force(filled, rng):
    index, stored = filled
    assert len(index) == 3000
    for query in rng.standard_normal((5, DIM)).astype(np.float32):
        assert_same_hits(index.search(query, 10), brute_force(stored, query, 10))


def test_upsert_replaces_and_remove_drops(filled, rng):
    index, stored = filled
    replaced = list(range(1, 3001, 5))
    vectors = rng.standard_normal((len(replaced), DIM)).astype(np.float32)
    index.upsert(replaced, vectors)
    stored.update(zip(replaced, vectors, strict=True))
    removed = [int(i) for i in rng.choice(np.arange(1, 3001), 900, replace=False)]
    index.remove(removed)
    for doc_id in removed:
        stored.pop(doc_id)

    assert len(index) == len(stored)
    for query in rng.standard_normal((5, DIM)).astype(np.float32):
        hits = index.search(query, 25)
        assert_same_hits(hits, brute_force(stored, query, 25))
        assert not {doc_id for doc_id, _ in hits} & set(removed)


def test_a_vector_finds_itself_first(filled):
    index, stored = filled
    ((doc_id, score), *_) = index.search(stored[1234], 3)
    assert doc_id == 1234
    assert score == pytest.approx(1.0, abs=ATOL)


@pytest.mark.parametrize("share", [0.01, 0.9], ids=["selective", "broad"])
def test_allowed_restricts_the_candidates_as_a_mask_or_as_ids(filled, rng, share):
    index, stored = filled
    allowed = {doc_id for doc_id in stored if rng.random() < share}
    mask = np.zeros(max(allowed) + 1, dtype=bool)
    mask[list(allowed)] = True
    query = rng.standard_normal(DIM).astype(np.float32)
    want = brute_force(stored, query, 10, allowed)

    assert_same_hits(index.search(query, 10, allowed=mask), want)
    assert_same_hits(index.search(query, 10, allowed=np.array(sorted(allowed))), want)


def test_similarities_are_each_asked_documents_cosine_in_the_order_asked(filled, rng):
    index, stored = filled
    index.remove([17])
    query = rng.standard_normal(DIM).astype(np.float32)
    _, exact = brute_force(stored, query, 1)
    asked = [2999, 5, 17, 40_000, 5, 1234]  # 17 removed, 40,000 never held, 5 twice
    got = index.similarities(query, asked)
    assert [doc_id for doc_id, _ in got] == [2999, 5, 5, 1234]
    for doc_id, score in got:
        assert score == pytest.approx(exact[doc_id], abs=ATOL)
    assert index.similarities(query, []) == []
    with pytest.raises(ValueError, match="dimension"):
        index.similarities(np.ones(DIM + 1, dtype=np.float32), [5])


def test_a_mask_shorter_than_the_ids_excludes_the_rest(filled, rng):
    index, _ = filled
    mask = np.ones(101, dtype=bool)
    query = rng.standard_normal(DIM).astype(np.float32)
    hits = index.search(query, 500, allowed=mask)
    assert {doc_id for doc_id, _ in hits} == set(range(1, 101))


def test_nothing_allowed_finds_nothing(filled, rng):
    index, _ = filled
    query = rng.standard_normal(DIM).astype(np.float32)
    assert index.search(query, 5, allowed=np.array([], dtype=np.int64)) == []
    assert index.search(query, 5, allowed=np.zeros(4000, dtype=bool)) == []


def test_empty_index_and_zero_k_find_nothing(rng):
    index = VectorIndex(DIM)
    query = rng.standard_normal(DIM).astype(np.float32)
    assert len(index) == 0
    assert index.search(query, 5) == []
    index.upsert([1], rng.standard_normal((1, DIM)))
    assert index.search(query, 0) == []


def test_k_larger_than_the_index_returns_everything_sorted(rng):
    index = VectorIndex(DIM)
    vectors = rng.standard_normal((7, DIM)).astype(np.float32)
    index.upsert([10, 20, 30, 40, 50, 60, 70], vectors)
    query = rng.standard_normal(DIM).astype(np.float32)
    stored = dict(zip([10, 20, 30, 40, 50, 60, 70], vectors, strict=True))
    assert_same_hits(index.search(query, 100), brute_force(stored, query, 100))


def test_a_repeated_id_in_one_upsert_keeps_its_last_vector(rng):
    index = VectorIndex(DIM)
    first, last, other = rng.standard_normal((3, DIM)).astype(np.float32)
    index.upsert([5, 6, 5], np.stack([first, other, last]))
    assert len(index) == 2
    ((doc_id, score), _) = index.search(last, 2)
    assert doc_id == 5 and score == pytest.approx(1.0, abs=ATOL)


def test_removing_unknown_ids_and_everything_is_fine(rng):
    index = VectorIndex(DIM)
    index.upsert([1, 2, 3], rng.standard_normal((3, DIM)))
    index.remove([99, 2, 2])
    assert len(index) == 2
    index.remove([1, 3])
    assert len(index) == 0
    assert index.search(rng.standard_normal(DIM), 3) == []


def test_vectors_are_normalised_on_the_way_in(rng):
    index = VectorIndex(DIM)
    vector = rng.standard_normal(DIM).astype(np.float32)
    index.upsert([1, 2], np.stack([vector * 50, np.zeros(DIM)]))
    hits = dict(index.search(vector, 2))
    assert hits[1] == pytest.approx(1.0, abs=ATOL)
    assert hits[2] == 0.0
    np.testing.assert_allclose(index.get(1), vector / np.linalg.norm(vector), atol=ATOL)
    assert np.linalg.norm(index.get(1)) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize(
    "vectors",
    [np.ones((2, DIM + 1)), np.ones((3, DIM)), np.full((2, DIM), np.nan)],
    ids=["wrong dimension", "wrong count", "not finite"],
)
def test_bad_vectors_are_refused(vectors):
    index = VectorIndex(DIM)
    with pytest.raises(ValueError):
        index.upsert([1, 2], vectors)
    assert len(index) == 0


def test_a_query_of_the_wrong_dimension_is_refused(rng):
    index = VectorIndex(DIM)
    index.upsert([1], rng.standard_normal((1, DIM)))
    with pytest.raises(ValueError, match="dimension"):
        index.search(np.ones(DIM - 1), 1)


def test_searches_run_while_other_threads_write(rng):
    index = VectorIndex(DIM)
    vectors = rng.standard_normal((4000, DIM)).astype(np.float32)
    index.upsert(range(1, 1001), vectors[:1000])
    queries = rng.standard_normal((50, DIM)).astype(np.float32)
    failures: list[BaseException] = []

    def write() -> None:
        try:
            for start in range(1000, 4000, 100):
                ids = range(start + 1, start + 101)
                index.upsert(ids, vectors[start : start + 100])
                index.remove(range(start - 99, start - 49))
        except BaseException as error:
            failures.append(error)

    def read() -> None:
        try:
            for query in queries:
                hits = index.search(query, 5)
                assert len(hits) == 5
                assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=write)] + [threading.Thread(target=read) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    assert len(index) == 4000 - 30 * 50


def test_blob_is_little_endian_float32_and_round_trips(rng):
    vector = rng.standard_normal(DIM).astype(np.float32)
    blob = to_blob(vector)
    assert len(blob) == DIM * 4
    assert blob[:4] == struct.pack("<f", vector[0])
    restored = from_blob(blob, DIM)
    assert restored.dtype == np.float32
    np.testing.assert_array_equal(restored, vector)
    assert restored.flags.writeable


def test_a_blob_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="bytes"):
        from_blob(b"\x00" * 12, DIM)


def test_at_384_dimensions_a_row_takes_388_bytes_and_a_cosine_stays_within_0_003(rng):
    index = VectorIndex(384)
    vectors = rng.standard_normal((5000, 384)).astype(np.float32)
    index.upsert(range(5000), vectors)
    assert index.nbytes == 5120 * (384 + 4 + 8)  # capacity grew from 1,024 to 5,120
    assert VectorIndex(384, capacity=5000).nbytes == 5000 * (384 + 4 + 8)
    units = unit(vectors)
    for query in rng.standard_normal((5, 384)).astype(np.float32):
        exact = units @ unit(query)
        got = dict(index.search(query, 5000))
        errors = np.abs(np.array([got[i] for i in range(5000)]) - exact)
        assert errors.max() < 0.003
