"""Writing an archive: the header, sessions, events (optional), then the vault's files,
one record at a time, so a log of any size is exported in bounded memory.

The export reads the raw log up to the newest event at its start: an event arriving
meanwhile is left for the next export, and the session of every exported event is in the
archive. The vault is read file by file; memvault writes every file atomically, so each
file is exported whole, as it was either before or after a write that lands meanwhile.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from memvault import __version__, jsontext
from memvault.archive.format import BOARD_PATH, END, header
from memvault.domain import Event, Session, iso, utc_now
from memvault.memory import Memory
from memvault.memory.reads import Reads
from memvault.memory.transfer import Transfer
from memvault.vault.files import read_text, refused_link

SESSION_PAGE = 500
CHUNK_BYTES = 64 * 1024


def encode(record: dict[str, Any]) -> bytes:
    """One archive line."""
    return (jsontext.dumps(record) + "\n").encode()


def file_name(at: str | None = None) -> str:
    """``memvault-export-20261130T100000Z.ndjson``, for a download or a default file."""
    stamp = (at or iso(utc_now()))[:19].replace("-", "").replace(":", "")
    return f"memvault-export-{stamp}Z.ndjson"


class Export:
    """One export of a memory. ``records()`` is read once; ``counts`` and ``unreadable``
    fill as it goes."""

    def __init__(self, memory: Memory, *, events: bool = False) -> None:
        self.memory = memory
        self.events = events
        self.exported_at = iso(utc_now())
        self.counts: Counter[str] = Counter()
        self.unreadable: list[str] = []  # files that are not UTF-8 text, left out

    @property
    def file_name(self) -> str:
        return file_name(self.exported_at)

    def records(self) -> Iterator[dict[str, Any]]:
        reads, transfer = self.memory.reads, self.memory.transfer
        yield header(exported_at=self.exported_at, memvault_version=__version__, events=self.events)
        end = reads.last_event_seq()
        sessions: set[str] = set()
        for session in _sessions(reads):
            if session.id not in sessions:  # a page may repeat one as activity reorders them
                sessions.add(session.id)
                yield self._counted(session_record(transfer, session, end))
        if self.events:
            late: dict[str, None] = {}
            for event in transfer.events_through(end):
                if event.session_id not in sessions:
                    late[event.session_id] = None  # its first event came while paging
                yield self._counted(event_record(event))
            for session_id in late:
                if (session := reads.session(session_id)) is not None:
                    yield self._counted(session_record(transfer, session, end))
        settings = self.memory.settings
        vault = settings.vault_path
        for path in _markdown(settings.fragments_path, vault):
            yield from self._file("fragment", path, settings.fragments_path)
        if not refused_link(vault, vault / BOARD_PATH, "the board"):
            yield from self._file("board", vault / BOARD_PATH, vault)
        memory_dir = vault / "memory"
        for path in _markdown(memory_dir / "sessions", vault, depth=1):
            yield from self._file("snapshot", path, vault)
        for path in _markdown(memory_dir / "archive", vault, depth=2):
            yield from self._file("snapshot", path, vault)
        end_record: dict[str, Any] = {"kind": END, "records": dict(self.counts)}
        if self.unreadable:
            end_record["unreadable"] = self.unreadable
        yield end_record

    def lines(self) -> Iterator[bytes]:
        for record in self.records():
            yield encode(record)

    def chunks(self, size: int = CHUNK_BYTES) -> Iterator[bytes]:
        """The archive in pieces of about ``size`` bytes (for a streamed response)."""
        pending: list[bytes] = []
        held = 0
        for line in self.lines():
            pending.append(line)
            held += len(line)
            if held >= size:
                yield b"".join(pending)
                pending, held = [], 0
        if pending:
            yield b"".join(pending)

    def write(self, out: IO[bytes]) -> None:
        for line in self.lines():
            out.write(line)

    def _counted(self, record: dict[str, Any]) -> dict[str, Any]:
        self.counts[record["kind"]] += 1
        return record

    def _file(self, kind: str, path: Path, root: Path) -> Iterator[dict[str, Any]]:
        relative = path.relative_to(root).as_posix()
        try:
            text = read_text(path)
        except UnicodeDecodeError:
            self.unreadable.append(path.relative_to(self.memory.settings.vault_path).as_posix())
            return
        except OSError:
            return  # removed or unreadable since it was listed
        if text is not None:
            yield self._counted({"kind": kind, "path": relative, "text": text})


def session_record(transfer: Transfer, session: Session, end: int) -> dict[str, Any]:
    return {
        "kind": "session",
        "id": session.id,
        "project": session.project,
        "cwd": session.cwd,
        "agentId": session.agent_id,
        "title": session.title,
        "boardSessionId": session.board_session_id,
        "createdAt": session.created_at,
        "firstEventAt": session.first_event_at,
        "lastEventAt": session.last_event_at,
        # The fragments made from the session's events up to here are in this archive:
        # an import does not extract them again.
        "extractedThrough": _event_id(transfer, session.extracted.seq, end),
    }


def event_record(event: Event) -> dict[str, Any]:
    """The event as ``POST /observe`` takes it, so an import stores it the same way."""
    return {
        "kind": "event",
        "hookType": event.hook_type,
        "sessionId": event.session_id,
        "eventId": event_id(event),
        "project": event.project,
        "cwd": event.cwd,
        "agentId": event.agent_id,
        "timestamp": event.client_timestamp,
        "data": event.payload,
    }


def event_id(event: Event) -> str:
    """The client's id, or one from the sequence number for an event sent without one."""
    return event.client_event_id or f"evt_{event.seq}"


def _event_id(transfer: Transfer, seq: int | None, end: int) -> str | None:
    if not seq or seq > end:
        return None
    found = transfer.event_at(seq)
    return event_id(found) if found is not None else None


def _sessions(reads: Reads) -> Iterator[Session]:
    offset = 0
    while page := reads.sessions(limit=SESSION_PAGE, offset=offset):
        yield from page
        offset += len(page)


def _markdown(folder: Path, vault: Path, *, depth: int | None = None) -> Iterator[Path]:
    """The ``.md`` files under ``folder`` (``depth`` levels down at most), hidden files and
    folders and symbolic links leading out of ``vault`` left out, in name order."""
    if not folder.is_dir():
        return
    for path in sorted(folder.rglob("*.md")):
        parts = path.relative_to(folder).parts
        if depth is not None and len(parts) > depth:
            continue
        if any(part.startswith(".") for part in parts) or not path.is_file():
            continue
        if not refused_link(vault, path, "exported file"):
            yield path
