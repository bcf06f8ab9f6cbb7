"""An in-memory cosine index over document vectors, and their byte form for storage.

Brute force on purpose: one matrix-vector product over unit vectors needs nothing beyond
numpy (no SQLite extension, no ANN library), and takes milliseconds, not seconds, at a
hundred thousand documents. Rows live in one preallocated matrix whose capacity grows by a
quarter, so neither an insert nor a search copies the whole matrix; a removal moves the last
row into the hole.

In memory a row is int8 codes and one float32 scale (388 bytes for 384 dimensions instead
of 1,536: 39 MB rather than 154 MB at 100,000 documents); a cosine comes out within about
0.003 of the float32 one, which moved no LoCoMo figure (docs/benchmarks.md). The store keeps
float32 blobs, so the in-memory form can change without re-embedding. A search widens
blocks of rows to float32 one at a time, so it never holds a float32 copy of the matrix.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np

_BLOB_DTYPE = np.dtype("<f4")
_INITIAL_CAPACITY = 1024
_BLOCK = 512  # rows widened to float32 at a time: 768 KB at 384 dimensions, within L2 (2,048 rows
# were 4 times slower than 1,024 here: they spill out of the cache)
_LEVELS = 127  # int8 codes run from -127 to 127


def to_blob(vector: np.ndarray | Sequence[float]) -> bytes:
    """A vector as little-endian float32 bytes, for a BLOB column."""
    return np.asarray(vector, dtype=_BLOB_DTYPE).reshape(-1).tobytes()


def from_blob(blob: bytes, dim: int) -> np.ndarray:
    """The float32 vector `to_blob` stored; a blob of the wrong length is refused."""
    if len(blob) != dim * _BLOB_DTYPE.itemsize:
        raise ValueError(f"a {dim}-dimensional vector takes {dim * 4} bytes, not {len(blob)}")
    return np.frombuffer(blob, dtype=_BLOB_DTYPE).astype(np.float32)


class VectorIndex:
    """Top-k cosine search over (document id, vector) pairs; safe to share between threads."""

    def __init__(self, dim: int, capacity: int = _INITIAL_CAPACITY) -> None:
        """``capacity``: rows to make room for at once (the number about to be loaded)."""
        if dim < 1:
            raise ValueError(f"dimension must be positive, not {dim}")
        self.dim = dim
        capacity = max(capacity, _INITIAL_CAPACITY)
        self._codes = np.zeros((capacity, dim), dtype=np.int8)
        self._scales = np.zeros(capacity, dtype=np.float32)
        self._ids = np.zeros(capacity, dtype=np.int64)
        self._rows: dict[int, int] = {}
        self._block = np.empty((_BLOCK, dim), dtype=np.float32)
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._rows

    @property
    def nbytes(self) -> int:
        """Memory the rows take (codes, scales, ids), capacity included."""
        return self._codes.nbytes + self._scales.nbytes + self._ids.nbytes

    def get(self, doc_id: int) -> np.ndarray | None:
        """The (normalised) vector of ``doc_id`` as float32, or None."""
        with self._lock:
            row = self._rows.get(doc_id)
            if row is None:
                return None
            vector = self._codes[row].astype(np.float32) * self._scales[row]
        return vector * _inverse_norms(vector[None, :])[0]

    def upsert(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        """Add or replace the vector of each id; vectors are normalised on the way in."""
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim == 1:
            matrix = matrix.reshape(1, -1)
        if matrix.shape != (len(ids), self.dim):
            raise ValueError(
                f"expected {len(ids)} vectors of dimension {self.dim}, got shape {matrix.shape}"
            )
        # A repeated id keeps its last vector, as if the pairs were upserted one by one.
        latest = {int(doc_id): position for position, doc_id in enumerate(ids)}
        positions = list(latest.values())
        if len(latest) < len(matrix):
            matrix = matrix[positions]
        codes, scales = _quantised(matrix)
        with self._lock:
            self._reserve(len(self._rows) + sum(d not in self._rows for d in latest))
            rows = [self._rows.setdefault(doc_id, len(self._rows)) for doc_id in latest]
            self._ids[rows] = list(latest)
            self._codes[rows] = codes
            self._scales[rows] = scales

    def remove(self, ids: Iterable[int]) -> None:
        """Drop the vectors of these ids; unknown ids are ignored."""
        with self._lock:
            for doc_id in ids:
                row = self._rows.pop(int(doc_id), None)
                if row is None:
                    continue
                last = len(self._rows)
                if row != last:
                    moved = int(self._ids[last])
                    self._codes[row] = self._codes[last]
                    self._scales[row] = self._scales[last]
                    self._ids[row] = moved
                    self._rows[moved] = row

    def search(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The `k` ids most similar to `query`, best first, with their cosine similarity.

        `allowed` restricts the candidates: either a boolean mask indexed by document id
        (ids past its end are excluded) or an array of document ids.
        """
        q = self._unit(query)
        with self._lock:
            n = len(self._rows)
            if k <= 0 or n == 0:
                return []
            ids = self._ids[:n]
            if allowed is None:
                scores = self._scores(self._codes[:n], self._scales[:n], q)
                candidates = ids
            else:
                rows = np.flatnonzero(_allowed_rows(ids, np.asarray(allowed)))
                # Gathering rows copies them: worth it only when the filter is selective.
                if 2 * rows.size < n:
                    scores = self._scores(self._codes[rows], self._scales[rows], q)
                else:
                    scores = self._scores(self._codes[:n], self._scales[:n], q)[rows]
                candidates = ids[rows]
            return _top(candidates, scores, k)

    def similarities(self, query: np.ndarray, ids: Iterable[int]) -> list[tuple[int, float]]:
        """The cosine of ``query`` with each of ``ids`` the index holds (the others left
        out), in the order asked: rows looked up by id, whatever the index's size."""
        q = self._unit(query)
        with self._lock:
            held = [
                (int(doc_id), row)
                for doc_id in ids
                if (row := self._rows.get(int(doc_id))) is not None
            ]
            if not held:
                return []
            rows = np.fromiter((row for _, row in held), dtype=np.int64, count=len(held))
            scores = self._scores(self._codes[rows], self._scales[rows], q)
        return [(doc_id, float(score)) for (doc_id, _), score in zip(held, scores, strict=True)]

    def _unit(self, query: np.ndarray) -> np.ndarray:
        """``query`` as a unit float32 vector of the index's dimension."""
        q = np.asarray(query, dtype=np.float32).reshape(1, -1)
        if q.shape != (1, self.dim):
            raise ValueError(f"query has dimension {q.shape[1]}, the index {self.dim}")
        return (q * _inverse_norms(q))[0]

    def _scores(self, codes: np.ndarray, scales: np.ndarray, q: np.ndarray) -> np.ndarray:
        """codes·q × scale per row, widening one block of rows at a time (under the lock:
        the block buffer is shared)."""
        scores = np.empty(len(codes), dtype=np.float32)
        block = self._block
        for start in range(0, len(codes), len(block)):
            part = codes[start : start + len(block)]
            widened = block[: len(part)]
            widened[...] = part
            np.dot(widened, q, out=scores[start : start + len(part)])
        scores *= scales
        return scores

    def _reserve(self, size: int) -> None:
        capacity = len(self._ids)
        if size <= capacity:
            return
        while capacity < size:
            # A quarter more each time: still few copies, and at most a fifth of the rows
            # (not half, as doubling would) held for documents yet to come.
            capacity += max(capacity // 4, _INITIAL_CAPACITY)
        n = len(self._rows)
        codes = np.zeros((capacity, self.dim), dtype=np.int8)
        scales = np.zeros(capacity, dtype=np.float32)
        ids = np.zeros(capacity, dtype=np.int64)
        codes[:n], scales[:n], ids[:n] = self._codes[:n], self._scales[:n], self._ids[:n]
        self._codes, self._scales, self._ids = codes, scales, ids


def _quantised(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row normalised, then as int8 codes and the scale that turns them back: the
    row's largest magnitude maps to ±127. An all-zero row stays zero."""
    unit = matrix * _inverse_norms(matrix)
    peaks = np.abs(unit).max(axis=1)
    scales = np.where(peaks > 0, peaks / _LEVELS, 1.0).astype(np.float32)
    codes = np.rint(unit / scales[:, None]).astype(np.int8)
    return codes, np.where(peaks > 0, scales, 0.0).astype(np.float32)


def _inverse_norms(matrix: np.ndarray) -> np.ndarray:
    """One column of 1/‖row‖, so that scaling by it makes a dot product the cosine.

    An all-zero row keeps a zero vector.
    """
    squares = np.einsum("ij,ij->i", matrix, matrix)
    if not np.isfinite(squares).all():
        raise ValueError("vectors must be finite numbers")
    norms = np.maximum(np.sqrt(squares), np.finfo(np.float32).tiny)
    return (1 / norms).astype(np.float32)[:, None]


def _allowed_rows(ids: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """A boolean per row: is that row's document id allowed."""
    if allowed.dtype == np.bool_:
        inside = (ids >= 0) & (ids < allowed.size)
        keep = np.zeros(ids.size, dtype=bool)
        keep[inside] = allowed[ids[inside]]
        return keep
    return np.isin(ids, allowed.astype(np.int64, copy=False))


def _top(ids: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    if scores.size > k:
        best = np.argpartition(scores, scores.size - k)[-k:]
    else:
        best = np.arange(scores.size)
    best = best[np.argsort(-scores[best], kind="stable")]
    return [(int(ids[i]), float(scores[i])) for i in best]
