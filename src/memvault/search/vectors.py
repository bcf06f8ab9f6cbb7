"""An in-memory cosine index over document vectors, and their byte form for storage.

Brute force on purpose: one matrix-vector product over unit vectors is exact, needs nothing
beyond numpy (no SQLite extension, no ANN library), and takes milliseconds, not seconds, at a
hundred thousand documents. Rows live in one preallocated matrix whose capacity doubles, so
neither an insert nor a search copies the whole matrix; a removal moves the last row into the
hole.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np

_BLOB_DTYPE = np.dtype("<f4")
_INITIAL_CAPACITY = 1024


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

    def __init__(self, dim: int) -> None:
        if dim < 1:
            raise ValueError(f"dimension must be positive, not {dim}")
        self.dim = dim
        self._vectors = np.zeros((_INITIAL_CAPACITY, dim), dtype=np.float32)
        self._ids = np.zeros(_INITIAL_CAPACITY, dtype=np.int64)
        self._rows: dict[int, int] = {}
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, doc_id: int) -> np.ndarray | None:
        """A copy of the (normalised) vector of ``doc_id``, or None."""
        with self._lock:
            row = self._rows.get(doc_id)
            return None if row is None else self._vectors[row].copy()

    def upsert(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        """Add or replace the vector of each id; vectors are normalised on the way in."""
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim == 1:
            matrix = matrix.reshape(1, -1)
        if matrix.shape != (len(ids), self.dim):
            raise ValueError(
                f"expected {len(ids)} vectors of dimension {self.dim}, got shape {matrix.shape}"
            )
        scale = _inverse_norms(matrix)
        # A repeated id keeps its last vector, as if the pairs were upserted one by one.
        latest = {int(doc_id): position for position, doc_id in enumerate(ids)}
        if len(latest) < len(matrix):
            positions = list(latest.values())
            matrix, scale = matrix[positions], scale[positions]
        with self._lock:
            self._reserve(len(self._rows) + sum(d not in self._rows for d in latest))
            rows = [self._rows.setdefault(doc_id, len(self._rows)) for doc_id in latest]
            self._ids[rows] = list(latest)
            start = rows[0] if rows else 0
            if rows == list(range(start, start + len(rows))):
                # Appending (a bulk load): scale straight into place, with no temporary copy.
                np.multiply(matrix, scale, out=self._vectors[start : start + len(rows)])
            else:
                self._vectors[rows] = matrix * scale

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
                    self._vectors[row] = self._vectors[last]
                    self._ids[row] = moved
                    self._rows[moved] = row

    def search(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The `k` ids most similar to `query`, best first, with their cosine similarity.

        `allowed` restricts the candidates: either a boolean mask indexed by document id
        (ids past its end are excluded) or an array of document ids.
        """
        q = np.asarray(query, dtype=np.float32).reshape(1, -1)
        if q.shape != (1, self.dim):
            raise ValueError(f"query has dimension {q.shape[1]}, the index {self.dim}")
        q = (q * _inverse_norms(q))[0]
        with self._lock:
            n = len(self._rows)
            if k <= 0 or n == 0:
                return []
            ids = self._ids[:n]
            if allowed is None:
                scores = self._vectors[:n] @ q
                candidates = ids
            else:
                rows = np.flatnonzero(_allowed_rows(ids, np.asarray(allowed)))
                # Gathering rows copies them: worth it only when the filter is selective.
                if 2 * rows.size < n:
                    scores = self._vectors[rows] @ q
                else:
                    scores = (self._vectors[:n] @ q)[rows]
                candidates = ids[rows]
            return _top(candidates, scores, k)

    def _reserve(self, size: int) -> None:
        capacity = len(self._ids)
        if size <= capacity:
            return
        while capacity < size:
            capacity *= 2
        vectors = np.zeros((capacity, self.dim), dtype=np.float32)
        ids = np.zeros(capacity, dtype=np.int64)
        n = len(self._rows)
        vectors[:n] = self._vectors[:n]
        ids[:n] = self._ids[:n]
        self._vectors, self._ids = vectors, ids


def _inverse_norms(matrix: np.ndarray) -> np.ndarray:
    """One column of 1/‖row‖, so that scaling by it makes a dot product the cosine.

    Computed without a temporary the size of the matrix; an all-zero row keeps a zero vector.
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
