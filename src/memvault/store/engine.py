"""What the parts both engines share are written against: one way to read, one way to
write, and the engine's parameter mark.

The shared parts (``log_reads``, ``session_rows``, ``graph_queries``) write their SQL with
``?`` marks; ``_sql`` turns them into the engine's own (``%s`` for psycopg). SQLite reads on
a pooled reader and writes on its writer thread; PostgreSQL does both in a transaction on a
pooled connection.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def like_literal(text: str) -> str:
    """``text`` as a LIKE pattern that matches it as written (``ESCAPE '\\'``): its ``%``
    and ``_`` are plain characters, not wildcards."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class Engine:
    """The engine's side of the shared parts (a mixin of each store)."""

    mark = "?"

    def _reading(self, op: Callable[[Any], T]) -> T:
        """Run ``op`` on a connection that reads."""
        raise NotImplementedError

    def _writing(self, op: Callable[[Any], T]) -> T:
        """Run ``op`` in one write transaction, committed before it returns."""
        raise NotImplementedError

    def _sql(self, text: str) -> str:
        return text if self.mark == "?" else _marked(text, self.mark)

    def _select(self, sql: str, params: Sequence = ()) -> list[tuple]:
        sql = self._sql(sql)
        return self._reading(lambda conn: conn.execute(sql, params).fetchall())

    def _select_one(self, sql: str, params: Sequence = ()) -> tuple | None:
        sql = self._sql(sql)
        return self._reading(lambda conn: conn.execute(sql, params).fetchone())

    def _select_in(self, sql: str, values: Sequence) -> list[tuple]:
        """``sql`` for each ``CHUNK`` of ``values`` at a time (``{marks}`` is where a chunk's
        marks go), the rows of every chunk in chunk order."""
        values = list(values)
        rows: list[tuple] = []
        for start in range(0, len(values), CHUNK):
            chunk = values[start : start + CHUNK]
            rows += self._select(sql.format(marks=", ".join("?" * len(chunk))), chunk)
        return rows

    def _change(self, sql: str, params: Sequence = ()) -> int:
        """Run one write statement; how many rows it changed."""
        sql = self._sql(sql)
        return self._writing(lambda conn: conn.execute(sql, params).rowcount)

    def _write_rows(self, conn, sql: str, rows: Sequence[Sequence], *, each: str) -> None:
        """Write ``rows`` with ``sql`` on ``conn``, ``CHUNK`` rows to a statement: ``{rows}``
        in ``sql`` is where each chunk's marks go, ``each`` the marks of one row."""
        for start in range(0, len(rows), CHUNK):
            chunk = rows[start : start + CHUNK]
            statement = self._sql(sql.format(rows=", ".join([each] * len(chunk))))
            conn.execute(statement, [value for row in chunk for value in row])


CHUNK = 500  # rows or ids to a statement, well below either engine's limit on parameters


@functools.lru_cache(maxsize=512)
def _marked(text: str, mark: str) -> str:
    return text.replace("?", mark)
