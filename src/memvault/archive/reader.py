"""Reading what is imported: a memvault archive, line by line, or agentmemory's export
document, told apart by their content.

An archive is read as a stream: one line in memory at a time (and a batch of events).
agentmemory's export is one JSON document and is read whole.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from memvault import jsontext
from memvault.archive import agentmemory
from memvault.archive.format import END, KINDS, ArchiveError, check_header, is_header
from memvault.archive.report import At, ImportReport
from memvault.archive.restore import Restore
from memvault.memory import Memory

Progress = Callable[[int], None]  # bytes read so far

_UNREADABLE = object()


def import_stream(
    memory: Memory,
    stream: IO[bytes],
    *,
    strategy: str = "merge",
    progress: Progress | None = None,
) -> ImportReport:
    """Import a memvault archive or an agentmemory export read from ``stream``.

    Raises ``ArchiveError`` (nothing written) when the input is neither, or is of a format
    or version this memvault does not read."""
    first = stream.readline()
    decoded = _decode(first)
    if is_header(decoded):
        return import_lines(
            memory, _numbered(first, stream, progress), strategy=strategy, first=decoded
        )
    document = _document(first + stream.read())
    return import_document(memory, document, strategy=strategy)


def import_document(memory: Memory, document: Any, *, strategy: str = "merge") -> ImportReport:
    """Import a decoded JSON value: agentmemory's ``ExportData`` object, a memvault archive
    as a list of records (header first), or an archive's text (NDJSON) as a string."""
    if isinstance(document, str):
        return import_lines(
            memory,
            ((n, line.encode()) for n, line in enumerate(document.splitlines(), 1)),
            strategy=strategy,
        )
    if isinstance(document, list):
        return import_lines(memory, enumerate(document, 1), strategy=strategy)
    if isinstance(document, dict) and is_header(document):
        raise ArchiveError(
            "a memvault archive is NDJSON: give its lines as a list of records or as text"
        )
    if not agentmemory.is_export_data(document):
        raise ArchiveError(
            "not a memvault archive (its first line is a header naming the format) nor an "
            "agentmemory export (an object with `version` and `sessions` or `memories`)"
        )
    return agentmemory.import_export_data(memory, document, strategy=strategy)


def import_lines(
    memory: Memory,
    lines: Iterable[tuple[int, Any]],
    *,
    strategy: str = "merge",
    first: Any = _UNREADABLE,
) -> ImportReport:
    """Import an archive from ``(line number, line)`` pairs: each line undecoded
    (``bytes``) or already decoded. The first is the header; ``first`` is it decoded, when
    the caller has decoded it already."""
    numbered = iter(lines)
    try:
        _, line = next(numbered)
    except StopIteration:
        raise ArchiveError("the archive is empty: its first line must be the header") from None
    if first is _UNREADABLE:
        try:
            first = _value(line)
        except ArchiveError as exc:
            raise ArchiveError(f"the first line must be the archive's header: {exc}") from None
    header = check_header(first)
    restore = Restore(memory, strategy=strategy, source="memvault", version=str(header["version"]))
    _records(restore, numbered)
    return restore.finish()


def _records(restore: Restore, lines: Iterator[tuple[int, Any]]) -> None:
    report = restore.report
    seen: Counter[str] = Counter()
    end: dict[str, Any] | None = None
    for number, line in lines:
        at = At(line=number)
        if isinstance(line, bytes | str) and not line.strip():
            continue
        try:
            record = _value(line)
        except ArchiveError as exc:
            report.refuse("record", exc.message, at)
            continue
        if not isinstance(record, dict):
            report.refuse("record", "a record must be a JSON object", at)
            continue
        kind = record.get("kind")
        if end is not None:
            report.refuse(str(kind or "record"), "a record after the archive's end record", at)
            continue
        if kind == END:
            end = record
            continue
        if kind not in KINDS:
            report.refuse("record", f"unknown record kind {kind!r}", at)
            continue
        seen[kind] += 1
        if kind == "event":
            if not isinstance(record.get("eventId"), str) or not record["eventId"]:
                report.refuse("event", "an archived event needs its `eventId`", at)
                continue
            restore.event(record, at)
        elif kind == "session":
            restore.session(record, at)
        else:
            restore.flush()
            getattr(restore.files, kind)(record, at)
    restore.flush()
    if end is None:
        report.complete = False
        report.problem("archive", "the archive has no end record: it may have been cut short")
    elif isinstance(end.get("records"), dict) and {
        k: v for k, v in end["records"].items() if v
    } != dict(seen):
        report.complete = False
        report.problem(
            "archive",
            f"the end record counts {end['records']}, but the archive holds {dict(seen)}",
        )


def _numbered(
    first: bytes, stream: IO[bytes], progress: Progress | None
) -> Iterator[tuple[int, bytes]]:
    done = len(first)
    yield 1, first
    for number, line in enumerate(stream, 2):
        done += len(line)
        if progress is not None:
            progress(done)
        yield number, line


def _decode(line: bytes) -> Any:
    try:
        return jsontext.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError, jsontext.NotUnicode):
        return _UNREADABLE


def _value(line: Any) -> Any:
    """A line decoded (a value given already decoded is returned as it is)."""
    if not isinstance(line, bytes | str):
        return line
    try:
        return jsontext.loads(line)
    except UnicodeDecodeError as exc:
        raise ArchiveError(f"not UTF-8 text (byte {exc.start})") from None
    except jsontext.UnusableJson as exc:  # a lone surrogate, too deep, too long a number
        raise ArchiveError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise ArchiveError(f"not JSON: {exc.msg} at column {exc.colno}") from None


def _document(content: bytes) -> Any:
    if not content.strip():
        raise ArchiveError("the input is empty")
    try:
        return jsontext.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError, jsontext.NotUnicode):
        raise ArchiveError(
            "not a memvault archive (its first line is not a memvault-export header) nor "
            "an agentmemory export (one JSON document)"
        ) from None
