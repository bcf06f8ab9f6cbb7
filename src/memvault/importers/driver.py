"""The import driver: transcripts in, envelopes through ``Memory.observe_many``, a report out.

Each source module turns one transcript into ``Step``s, one per line (or record) read. A
step carries the envelopes that line yields, or why it yields none, or what is wrong with
it. The driver batches envelopes without splitting a line's envelopes across batches, so
a line is imported whole or not at all, and counts what happened.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from memvault import jsontext
from memvault.domain import iso

if TYPE_CHECKING:
    from memvault.memory import Memory

BATCH_SIZE = 500
# A live hook could never send more than the REST body limit (1 MiB); longer strings are
# clipped so an imported event stays within what a hook could have sent.
TEXT_LIMIT = 200_000
# One line of a transcript is parsed whole; a longer one is reported, not loaded.
LINE_LIMIT = 64 * 1024 * 1024
# A file whose first lines are all unreadable is not JSON lines: stop reading it.
GIVE_UP_AFTER = 20
# Errors kept for the report; more are only counted.
ERRORS_KEPT = 1000


@dataclass(slots=True)
class Step:
    """What one line of a transcript yields."""

    line: int  # 1-based line (or record) number; 0 for what a file's end releases
    envelopes: list[dict[str, Any]] = field(default_factory=list)
    skipped: str | None = None  # why the line itself yields nothing
    error: str | None = None  # what is wrong with the line; it yields nothing
    lines: int = 1  # how many source lines the step accounts for


@dataclass(frozen=True, slots=True)
class Transcript:
    """One unit to import: a file, or one conversation of a database."""

    label: str  # shown in progress and errors: a path, or ``path#conversation``
    read: Callable[[], Iterator[Step]]


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "error": self.error}


@dataclass(slots=True)
class ImportReport:
    files: int = 0
    lines: int = 0
    sent: int = 0
    new: int = 0
    duplicates: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    errors: list[Problem] = field(default_factory=list)
    error_count: int = 0
    sessions: set[str] = field(default_factory=set)

    def problem(self, file: str, line: int, error: str) -> None:
        self.error_count += 1
        if len(self.errors) < ERRORS_KEPT:
            self.errors.append(Problem(file, line, error))

    def to_dict(self) -> dict[str, Any]:
        # Copies first: another thread may be filling the report (dict, set and list
        # copies are single operations under the interpreter lock).
        skipped, sessions, errors = dict(self.skipped), set(self.sessions), list(self.errors)
        return {
            "files": self.files,
            "lines": self.lines,
            "eventsSent": self.sent,
            "newEvents": self.new,
            "duplicates": self.duplicates,
            "skipped": dict(sorted(skipped.items(), key=lambda item: -item[1])),
            "errorCount": self.error_count,
            "errors": [p.to_dict() for p in errors],
            "sessionIds": sorted(sessions),
        }


class Progress(Protocol):
    def file_started(self, label: str) -> None: ...
    def lines_read(self, count: int) -> None: ...
    def file_done(self) -> None: ...


class _Silent:
    def file_started(self, label: str) -> None:
        pass

    def lines_read(self, count: int) -> None:
        pass

    def file_done(self) -> None:
        pass


def run_import(
    memory: Memory,
    transcripts: Iterable[Transcript],
    *,
    report: ImportReport | None = None,
    progress: Progress | None = None,
    batch_size: int = BATCH_SIZE,
    stop: Callable[[], bool] | None = None,
) -> ImportReport:
    """Import every transcript; a bad line or file is reported and the rest goes on.

    ``report`` may be passed in to watch it fill from another thread; ``stop`` is asked
    between files whether to end early.
    """
    report = report if report is not None else ImportReport()
    progress = progress or _Silent()
    batch: list[dict[str, Any]] = []
    origins: list[tuple[str, int]] = []

    def flush() -> None:
        if not batch:
            return
        result = memory.observe_many(batch)
        report.sent += result.total
        report.new += result.imported
        report.duplicates += result.deduplicated
        for item in result.errors:
            file, line = origins[item.index]
            report.problem(file, line, f"event {item.event_id or '?'} refused: {item.error}")
        batch.clear()
        origins.clear()

    for transcript in transcripts:
        if stop is not None and stop():
            break
        report.files += 1
        progress.file_started(transcript.label)
        try:
            for step in transcript.read():
                report.lines += step.lines
                if step.error is not None:
                    report.problem(transcript.label, step.line, step.error)
                elif step.skipped is not None:
                    report.skipped[step.skipped] += 1
                if step.envelopes:
                    if len(batch) + len(step.envelopes) > batch_size:
                        flush()
                    for envelope in step.envelopes:
                        report.sessions.add(envelope["sessionId"])
                    batch.extend(step.envelopes)
                    origins.extend([(transcript.label, step.line)] * len(step.envelopes))
                if step.lines:
                    progress.lines_read(step.lines)
        except OSError as exc:
            report.problem(transcript.label, 0, f"could not read: {exc.strerror or exc}")
        except Exception as exc:  # a reader bug must not lose the other files
            report.problem(transcript.label, 0, f"could not import: {type(exc).__name__}: {exc}")
        progress.file_done()
    flush()
    return report


# -- finding transcripts -----------------------------------------------------------------


@dataclass(slots=True)
class Discovery:
    """Files found under a folder: the first ``limit`` of them, and how many there were."""

    files: list[Path] = field(default_factory=list)
    discovered: int = 0
    truncated: bool = False
    traversal_capped: bool = False


def find_files(
    root: Path,
    accept: Callable[[Path], bool],
    *,
    limit: int | None = None,
    visit_limit: int | None = None,
) -> Discovery:
    """Files under ``root`` that ``accept`` takes, in a stable order (a folder's files,
    then its subfolders', by name). Symbolic links are not followed. At most
    ``visit_limit`` entries are looked at, so a huge unrelated tree cannot stall the
    search."""
    found = Discovery()
    if root.is_file() and not root.is_symlink():
        if accept(root):
            found.files.append(root)
            found.discovered = 1
        return found
    visited = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        subfolders = []
        for entry in entries:
            visited += 1
            if visit_limit is not None and visited > visit_limit:
                found.traversal_capped = found.truncated = True
                return found
            try:
                if entry.is_dir(follow_symlinks=False):
                    subfolders.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False) and accept(Path(entry.path)):
                    found.discovered += 1
                    if limit is None or len(found.files) < limit:
                        found.files.append(Path(entry.path))
                    else:
                        found.truncated = True
            except OSError:
                continue
        stack.extend(reversed(subfolders))
    return found


# -- reading JSON lines ------------------------------------------------------------------


@dataclass(slots=True)
class JsonLine:
    number: int
    record: dict[str, Any] | None = None  # None with no error: a blank line
    error: str | None = None


def json_lines(path: Path) -> Iterator[JsonLine]:
    """The lines of a JSON lines file, parsed one at a time: memory stays bounded by the
    longest line, whatever the file's size."""
    failures = 0
    good = False
    with open(path, "rb") as stream:
        number = 0
        while True:
            raw = stream.readline(LINE_LIMIT + 1)
            if not raw:
                return
            number += 1
            if len(raw) > LINE_LIMIT and not raw.endswith(b"\n"):
                while (rest := stream.readline(LINE_LIMIT)) and not rest.endswith(b"\n"):
                    pass
                yield JsonLine(number, error=f"line longer than {LINE_LIMIT} bytes")
                continue
            if not raw.strip():
                yield JsonLine(number)
                continue
            line = _parse(number, raw, last=not raw.endswith(b"\n"))
            if line.error is None:
                good = True
            elif not good:
                failures += 1
                if failures >= GIVE_UP_AFTER:
                    yield line
                    yield JsonLine(
                        number,
                        error=f"not a JSON lines file: its first {failures} "
                        "lines do not parse; the rest was not read",
                    )
                    return
            yield line


def json_steps(path: Path, step: Callable[[JsonLine, dict[str, Any]], Step]) -> Iterator[Step]:
    """A JSON lines file as steps: a line that cannot be read is an error, a blank one is
    skipped, and each record is the step ``step`` makes of it."""
    for line in json_lines(path):
        if line.error is not None:
            yield Step(line.number, error=line.error)
        elif line.record is None:
            yield Step(line.number, skipped="blank line")
        else:
            yield step(line, line.record)


def _parse(number: int, raw: bytes, *, last: bool) -> JsonLine:
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            record = _with_lone_surrogates(raw)
        except RecursionError:  # deeper than the interpreter's stack: this line alone
            return JsonLine(number, error=_TOO_DEEP)
        if record is None:
            if last:
                return JsonLine(number, error="truncated last line (still being written?)")
            return JsonLine(number, error=f"not JSON: {exc}")
    if not isinstance(record, dict):
        return JsonLine(number, error=f"a JSON {type(record).__name__}, not an object")
    if jsontext.too_deep(raw, record):  # as /observe refuses it; later steps walk it
        return JsonLine(number, error=_TOO_DEEP)
    return JsonLine(number, record)


_TOO_DEEP = f"JSON nested deeper than {jsontext.MAX_DEPTH} levels, the most memvault reads"


def _with_lone_surrogates(raw: bytes) -> Any:
    """A line a JavaScript host cut inside an emoji (a lone ``\\ud83d`` escape), which
    orjson refuses: read by the standard library, each lone half made U+FFFD."""
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return _repaired(value)


def _repaired(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_repaired(item) for item in value]
    if isinstance(value, dict):
        return {_repaired(k): _repaired(v) for k, v in value.items()}
    return value


# -- envelope helpers --------------------------------------------------------------------


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as the hosts' blocks: a plain string is one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def clip(text: str) -> str:
    if len(text) <= TEXT_LIMIT:
        return text
    return f"{text[:TEXT_LIMIT]}… [{len(text) - TEXT_LIMIT} more characters not imported]"


def clip_strings(value: Any) -> Any:
    """``value`` with every string longer than the limit clipped (for tool inputs)."""
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, dict):
        return {key: clip_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clip_strings(item) for item in value]
    return value


def project_name(folder: str) -> str:
    """The project a working folder belongs to: its last path component."""
    name = folder.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return name or folder or "unknown"


class Clock:
    """Times for records that carry none: from an anchor, a millisecond per event.

    The first time a record states wins over the guessed start (a file's modification
    time); after that the clock never goes backwards."""

    STEP = timedelta(milliseconds=1)

    def __init__(self, start: datetime, *, stated: bool = True) -> None:
        self.now = start - self.STEP
        self.stated = stated

    @classmethod
    def from_mtime(cls, path: Path) -> Clock:
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            mtime = 0.0
        return cls(datetime.fromtimestamp(mtime, UTC), stated=False)

    def set(self, at: datetime) -> None:
        """A record says what time it is: later events count from there."""
        self.now = max(self.now, at - self.STEP) if self.stated else at - self.STEP
        self.stated = True

    def tick(self) -> str:
        self.now += self.STEP
        return iso(self.now)


class Subagents:
    """A subagent's conversation, told the way live hooks tell it: ``subagent_start`` with
    its task, its tool calls as they finish, ``subagent_stop`` with its last message. Its
    other messages are narration and are left out."""

    def __init__(self) -> None:
        self._last: dict[str, dict[str, Any] | None] = {}

    def start(self, agent: str, envelope: dict[str, Any]) -> list[dict[str, Any]]:
        """The subagent got its task. Returns what to emit (an earlier run's stop first)."""
        emitted = self._stop(agent)
        self._last[agent] = None
        envelope["hookType"] = "subagent_start"
        return [*emitted, envelope]

    def started(self, agent: str) -> bool:
        return agent in self._last

    def said(self, agent: str, envelope: dict[str, Any]) -> None:
        """The subagent's latest message: it becomes the stop, unless a later one does."""
        envelope["hookType"] = "subagent_stop"
        self._last[agent] = envelope

    def finish(self) -> list[dict[str, Any]]:
        return [envelope for agent in list(self._last) for envelope in self._stop(agent)]

    def _stop(self, agent: str) -> list[dict[str, Any]]:
        last = self._last.pop(agent, None)
        return [last] if last is not None else []
