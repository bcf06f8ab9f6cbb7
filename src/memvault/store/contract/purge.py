"""The purge part: finding a text wherever the store holds it, and replacing it.

A purge reads every text column of every table the store keeps (the event log included),
row by row, and replaces each match with ``MARKER``; a JSON text is rewritten inside its
strings, so an escaped quote or newline cannot hide a match and the JSON stays valid. The
event log is rewritten in place, once, and the purge records that it did: when, and how
many places, rows and matches, never the text.

The search index's lexical rows (FTS5 rows, PostgreSQL's postings) hold analyzed terms,
not text: a document whose rows hold the terms of what matched, or whose text held it,
loses those rows and its vector, gets a new revision and a content hash no draft has, and
the index writes it again from what is left (observations through the change log). Then
the engine rewrites its files (SQLite: FTS5 merged, checkpoint, ``VACUUM`` with
``secure_delete``; PostgreSQL: ``VACUUM FULL`` of the tables touched), so the old bytes
are not left on free pages.

Key columns are rewritten too (a fragment's id is its file's path, and a path may hold
the text), each row by the key it had; a unique value that would collide gets the row's
key appended. The engine says which columns there are (``_text_columns``), how the event
log's guard is lifted for the purge's transaction, and how it compacts.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memvault import jsontext
from memvault.analyzer import tokens
from memvault.domain import iso, utc_now
from memvault.store.engine import Engine

MARKER = "[REDACTED:purged]"
AUDIT_KEPT = 20  # purges listed in the audit; the count covers them all
MATCHED_KEPT = 1000  # distinct matched texts whose terms are looked for in the index


@dataclass(frozen=True, slots=True)
class Column:
    """A text column a purge reads: its table, how a row is named (``key``: the columns
    that pick one row out), and whether a value must stay unique."""

    table: str
    name: str
    key: tuple[str, ...]
    unique: bool = False


@dataclass(frozen=True, slots=True)
class Place:
    """Where the text was found: ``table.column`` (or a file), in how many rows or files,
    how many times."""

    where: str
    rows: int
    matches: int


@dataclass(frozen=True, slots=True)
class PurgeRecord:
    """One purge, as the audit keeps it: when, and how much it replaced."""

    at: str
    places: int
    rows: int
    matches: int


# Columns that hold what the store is ordered and typed by, never what a person or a host
# wrote: a time, a hook's or a row's kind, a state, a hash. A purge of "2026" or "stop" must
# not rewrite them (an event whose time no longer sorts is lost to every follower).
_STRUCTURAL = frozenset(
    {"timestamp", "hook_type", "kind", "type", "state", "status", "content_hash", "model"}
)


def structural(column: str) -> bool:
    """Whether a text column is one of the store's own (``_STRUCTURAL``, or a time)."""
    return column in _STRUCTURAL or column.endswith(("_at", "_timestamp"))


def scrub(value: str, pattern: re.Pattern[str]) -> tuple[str, int]:
    """``value`` with every match replaced by ``MARKER``, and how many there were. JSON
    text (an object or a list) is rewritten inside its keys and strings."""
    stripped = value.lstrip()
    if stripped[:1] in ("{", "[") and (pattern.search(value) or "\\" in value):
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        if isinstance(decoded, (dict, list)):
            cleaned, count = _scrub_json(decoded, pattern)
            return (jsontext.dumps(cleaned), count) if count else (value, 0)
    if not pattern.search(value):
        return value, 0
    return pattern.subn(MARKER, value)


def distinctive_terms(matched: Iterable[str]) -> set[str]:
    """For each matched text, the longest of its analyzed terms: what the search index
    holds of it (lower-cased, stemmed), and rare enough to name the documents that do."""
    found: set[str] = set()
    for text in matched:
        terms = tokens(text)
        if terms:
            found.add(max(terms, key=len))
    return found


def _keys_of(found: list[tuple[Column, list[tuple[tuple, str]], int]], table: str) -> set[int]:
    return {
        int(key[0]) for column, changes, _ in found if column.table == table for key, _ in changes
    }


def _scrub_json(value: Any, pattern: re.Pattern[str]) -> tuple[Any, int]:
    if isinstance(value, str):
        return pattern.subn(MARKER, value) if pattern.search(value) else (value, 0)
    if isinstance(value, list):
        total, items = 0, []
        for item in value:
            cleaned, count = _scrub_json(item, pattern)
            items.append(cleaned)
            total += count
        return items, total
    if isinstance(value, dict):
        total, pairs = 0, {}
        for key, item in value.items():
            new_key, key_count = _scrub_json(key, pattern)
            cleaned, count = _scrub_json(item, pattern)
            pairs[new_key] = cleaned
            total += key_count + count
        return pairs, total
    return value, 0


class Purge(Engine, ABC):
    """Finding and replacing a text in every table, and the audit of purges done."""

    # The derived part's change log (observations rewritten in place), which the store has.
    _log_changes: Callable[[Any, list[int]], None]

    @abstractmethod
    def _text_columns(self, conn) -> list[Column]:
        """Every text column a purge reads, the search index's lexical rows left out."""

    @abstractmethod
    def _scan(self, conn, sql: str) -> Iterable[tuple]:
        """The rows of ``sql``, read as they come (a table may be larger than memory)."""

    @abstractmethod
    def _lift_event_guard(self, conn) -> None:
        """Let the purge's transaction update events (the log refuses updates otherwise)."""

    @abstractmethod
    def _restore_event_guard(self, conn) -> None:
        """Put the event log's guard back, in the same transaction."""

    @abstractmethod
    def _documents_with_terms(self, conn, terms: set[str]) -> set[int]:
        """The documents whose lexical rows (FTS5 rows, postings) hold one of ``terms``."""

    @abstractmethod
    def _drop_lexical(self, conn, ids: Sequence[int], reembed: set[int]) -> None:
        """Documents that held the text: their lexical rows dropped, and a content hash
        and mtime no draft or file has, so the index writes them again in full from what
        is left; those in ``reembed`` (whose own text held it) also lose their vector and
        get a new revision, so the embedder embeds them again."""

    @abstractmethod
    def _compact(self, tables: Sequence[str]) -> None:
        """Rewrite the engine's files so no copy of a replaced value is left on free pages
        or in a log."""

    def purge_text(self, pattern: re.Pattern[str], *, dry_run: bool = False) -> list[Place]:
        """Replace every match of ``pattern`` in every text column (``dry_run``: count
        them, change nothing); where they were. The search index's lexical rows hold the
        analyzed terms of a text, not the text: a document whose rows hold the terms of
        what matched is dropped from them, and written again by the index."""

        def op(conn) -> list[Place]:
            found: list[tuple[Column, list[tuple[tuple, str]], int]] = []
            matched: set[str] = set()
            for column in self._text_columns(conn):
                if structural(column.name):
                    continue
                changes, matches = self._find(conn, column, pattern, matched)
                if changes:
                    found.append((column, changes, matches))
            places = [Place(f"{c.table}.{c.name}", len(ch), m) for c, ch, m in found]
            terms = distinctive_terms(matched)
            lexical = self._documents_with_terms(conn, terms) if terms else set()
            if lexical:
                places.append(Place("documents.lexical terms", len(lexical), len(lexical)))
            if dry_run or not places:
                return places
            events = any(column.table == "events" for column, _, _ in found)
            if events:
                self._lift_event_guard(conn)
            self._rewrite(conn, found)
            if events:
                self._restore_event_guard(conn)
            rewritten = _keys_of(found, "documents")
            documents = sorted(lexical | rewritten)
            if documents:
                self._drop_lexical(conn, documents, rewritten)
            # The index writes the observations' documents again, with their neighbours'.
            seqs = _keys_of(found, "observations") | self._observation_seqs(conn, documents)
            self._log_changes(conn, sorted(seqs))
            return places

        if dry_run:
            return self._reading(op)
        places = self._writing(op)
        if places:
            self._compact(sorted({p.where.split(".", 1)[0] for p in places}))
        return places

    def _find(
        self, conn, column: Column, pattern: re.Pattern[str], matched: set[str]
    ) -> tuple[list[tuple[tuple, str]], int]:
        keys = ", ".join(column.key)
        sql = f"SELECT {keys}, {column.name} FROM {column.table} WHERE {column.name} IS NOT NULL"
        changes: list[tuple[tuple, str]] = []
        total = 0
        for row in self._scan(conn, sql):
            value = row[-1]
            if not isinstance(value, str):
                continue
            cleaned, count = scrub(value, pattern)
            if count:
                changes.append((tuple(row[:-1]), cleaned))
                total += count
                if len(matched) < MATCHED_KEPT:
                    matched.update(m.group(0) for m in pattern.finditer(value))
        return changes, total

    def _rewrite(self, conn, found: list[tuple[Column, list[tuple[tuple, str]], int]]) -> None:
        """One update per row, every changed column at once: a key column may change
        too, and the row is found by the key it had."""
        rows: dict[tuple[str, tuple[str, ...]], dict[tuple, dict[Column, str]]] = {}
        for column, changes, _ in found:
            table = rows.setdefault((column.table, column.key), {})
            for key, cleaned in changes:
                table.setdefault(key, {})[column] = cleaned
        for (table, key_columns), changed in rows.items():
            where = " AND ".join(f"{k} = ?" for k in key_columns)
            for key, values in changed.items():
                names = list(values)
                chosen = [self._free(conn, column, values[column], key) for column in names]
                assignments = ", ".join(f"{column.name} = ?" for column in names)
                sql = self._sql(f"UPDATE {table} SET {assignments} WHERE {where}")
                conn.execute(sql, (*chosen, *key))

    def _free(self, conn, column: Column, cleaned: str, key: tuple) -> str:
        """``cleaned``, or, when a unique column already holds it (two values that differed
        only in the text), ``cleaned`` with the row's key appended to keep it apart."""
        if not column.unique or not self._taken(conn, column, cleaned):
            return cleaned
        return f"{cleaned}#{'-'.join(map(str, key))}"

    def _taken(self, conn, column: Column, value: str) -> bool:
        sql = self._sql(f"SELECT 1 FROM {column.table} WHERE {column.name} = ? LIMIT 1")
        return conn.execute(sql, (value,)).fetchone() is not None

    def _observation_seqs(self, conn, ids: Sequence[int]) -> set[int]:
        seqs: set[int] = set()
        sql = self._sql("SELECT key FROM documents WHERE kind = 'observation' AND id = ?")
        for doc_id in ids:
            row = conn.execute(sql, (doc_id,)).fetchone()
            if row and str(row[0]).startswith("obs_") and str(row[0])[4:].isdigit():
                seqs.add(int(str(row[0])[4:]))
        return seqs

    def record_purge(self, places: int, rows: int, matches: int) -> PurgeRecord:
        """Note a purge in the audit: when, and how much (never what)."""
        record = PurgeRecord(iso(utc_now()), places, rows, matches)
        sql = self._sql(
            "INSERT INTO purges (purged_at, place_count, row_count, match_count) "
            "VALUES (?, ?, ?, ?)"
        )
        self._writing(lambda conn: conn.execute(sql, (record.at, places, rows, matches)))
        return record

    def purge_audit(self, limit: int = AUDIT_KEPT) -> tuple[int, list[PurgeRecord]]:
        """How many purges were done, and the latest ``limit`` of them, newest first."""
        (count,) = self._select_one("SELECT count(*) FROM purges") or (0,)
        rows = self._select(
            "SELECT purged_at, place_count, row_count, match_count FROM purges "
            "ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return int(count), [PurgeRecord(r[0], int(r[1]), int(r[2]), int(r[3])) for r in rows]
