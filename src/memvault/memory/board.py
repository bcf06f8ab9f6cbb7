"""The session board as the faces use it: a host session's row, the rows an agent
registers, updates, continues, releases and archives, organize, and the store's mirror of
``memory/index.md``.

Board rows are written by the vault's owner: each write runs through ``VaultWrites``
(``memory/owner.py``), in place on the owner and handed to it elsewhere; ``vault_writes``
is the table of this part's writes by kind.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.config import Settings
from memvault.domain import BoardRow
from memvault.memory.owner import vault_write, vault_writes
from memvault.memory.reading import INJECTIONS_SCANNED, BoardEntry, board_entry
from memvault.store import Store
from memvault.vault.board import BoardFormatError, parse_time
from memvault.vault.board_files import BoardError
from memvault.vault.lifecycle import Report, SessionBoard
from memvault.vault.snapshot import Snapshot, SnapshotInput, as_snapshot
from memvault.vault.sync_conflicts import merge_board_copies

if TYPE_CHECKING:
    from memvault.memory.owner import VaultWrites

log = logging.getLogger(__name__)

_HOST_ALIASES = {"claude": "claude-code", "claudecode": "claude-code", "cursor-agent": "cursor"}


class Board:
    """The session board: its rows in ``memory/index.md`` and the store's mirror of them."""

    def __init__(self, settings: Settings, store: Store, writes: VaultWrites) -> None:
        self.settings = settings
        self.store = store
        self.writes = writes
        self.vault_board = SessionBoard(
            settings.vault_path, is_taken=store.board_session_taken, language=settings.language
        )
        # The board as host registrations use it: they wait briefly for the lock, so a
        # vault someone holds cannot tie up the server.
        self._host_board = SessionBoard(
            settings.vault_path,
            lock_timeout=2.0,
            is_taken=store.board_session_taken,
            language=settings.language,
        )
        self._linked: set[str] = set()
        self._registering: set[str] = set()
        self._sync_lock = threading.Lock()
        self._board_mark: tuple[int, int, int] | bool | None = False
        self._registration_locks = tuple(threading.Lock() for _ in range(64))

    def vault_writes(self) -> dict[str, Callable[..., Any]]:
        """This part's vault writes by kind, as the owner runs them for another replica."""
        return vault_writes(self)

    def session_seen(self, session_id: str, agent_id: str | None) -> None:
        """A session's event was stored: give the session its board row if it has none
        yet and no registration is under way (the spool drain's and imports' path)."""
        if self.needs_board_row(session_id):
            self.register_from_event(session_id, agent_id)

    # -- reading the board -------------------------------------------------------------------

    @property
    def index_path(self) -> Path:
        """``memory/index.md``."""
        return self.vault_board.index_path

    def file_mark(self) -> tuple[int, int, int] | None:
        """The board file's modification time and size (None without one): what changes
        when anyone edits it."""
        try:
            stat = self.index_path.stat()
        except OSError:
            return None
        return stat.st_ino, stat.st_mtime_ns, stat.st_size

    def row_in_file(self, board_session_id: str) -> BoardRow | None:
        """A row as ``memory/index.md`` has it now."""
        return self.vault_board.board().get(board_session_id)

    def snapshot_text(self, board_session_id: str) -> str | None:
        """A row's snapshot file as it is, or None."""
        return self.vault_board.snapshot_text(board_session_id)

    def agent_for(self, agent_id: str | None) -> str:
        """The board's agent name for a host: ``cursor`` → ``cursor-main-agent``."""
        if not agent_id or not agent_id.strip():
            return self.settings.agent_name
        host = re.sub(r"[^a-z0-9]+", "-", agent_id.strip().lower()).strip("-")[:40].strip("-")
        if not host:
            return self.settings.agent_name
        host = _HOST_ALIASES.get(host, host)
        return host if host.endswith("-agent") else f"{host}-main-agent"

    @vault_write
    def register_session(
        self,
        *,
        agent: str | None = None,
        manual: bool = False,
        topic: str | None = None,
        summary: str | None = None,
        keywords: str | None = None,
        content: SnapshotInput = None,
    ) -> Report:
        """Add a board row: idle (as a host's session start does) or, with ``manual``,
        active with a snapshot of ``content``."""
        return self.vault_board.register(
            agent or self.settings.agent_name,
            manual=manual,
            topic=topic,
            summary=summary,
            keywords=keywords,
            content=as_snapshot(content),
        )

    @vault_write
    def register_host_session(
        self, session_id: str, agent_id: str | None = None, *, from_event: bool = False
    ) -> Report:
        """Give a host session its board row, once; later calls return the same id while
        its row is on the board. A host that starts a session again after its row was
        organized away gets a new one; an event never re-registers a session."""
        with self._registration_lock(session_id):
            known = self.store.get_session(session_id)
            linked = known.board_session_id if known is not None else None
            if linked and (from_event or self._row_exists(linked)):
                self._linked.add(session_id)
                return Report(
                    "register",
                    True,
                    linked,
                    f"Your Memory Session ID is: {linked}",
                    {"existing": True},
                )
            board = self._host_board if from_event else self.vault_board
            # A host's session start is now; an event's session began when its first
            # event was lived (an import's, a spool's sent days later, or a live one's).
            began = known.first_event_at if from_event and known is not None else None
            report = board.register(self.agent_for(agent_id), at=parse_time(began or ""))
            if report.ok and known is not None:
                self.store.link_board_session(session_id, report.session_id, replacing=linked)
                self._linked.add(session_id)
            elif not report.ok:
                log.warning("no board row for session %s: %s", session_id, report.message)
            return report

    def register_from_event(self, session_id: str, agent_id: str | None) -> None:
        """Background registration after a session's first live event; never raises.
        A session the store already links to a row (whichever replica linked it) needs no
        call; on a standby the call is a hand-over to the vault's owner, so its answer is
        remembered here too."""
        try:
            known = self.store.get_session(session_id)
            if known is not None and known.board_session_id:
                self._linked.add(session_id)
                return
            report = self.register_host_session(session_id, agent_id, from_event=True)
            if report.ok:
                self._linked.add(session_id)
        except Exception:
            log.exception("could not register session %s on the board", session_id)
        finally:
            self._registering.discard(session_id)

    def needs_board_row(self, session_id: str) -> bool:
        """Cheap check for the ingest path: should this event start a registration?"""
        if session_id in self._linked or session_id in self._registering:
            return False
        self._registering.add(session_id)
        return True

    def _row_exists(self, board_session_id: str) -> bool:
        try:
            return self.vault_board.has_row(board_session_id)
        except BoardFormatError:
            return True  # on the board, twice: it exists; organize reports the duplicate

    @vault_write
    def update_session(
        self,
        session_id: str,
        content: SnapshotInput,
        *,
        topic: str | None = None,
        summary: str | None = None,
        keywords: str | None = None,
    ) -> Report:
        """A row's snapshot, and its topic, summary or keywords when given."""
        return self.vault_board.update(
            session_id, as_snapshot(content), topic=topic, summary=summary, keywords=keywords
        )

    @vault_write
    def continue_session(
        self, current: str | None, source: str, *, agent: str | None = None
    ) -> Report:
        """Continue the row ``source`` in ``current`` (a new row when None)."""
        return self.vault_board.continue_from(
            current, source, agent=agent or self.settings.agent_name
        )

    @vault_write
    def release_session(self, current: str, source: str) -> Report:
        return self.vault_board.release(current, source)

    @vault_write
    def archive_session(self, session_id: str, *, force: bool = False) -> Report:
        return self.vault_board.archive(session_id, force=force)

    @vault_write
    def organize(self, *, dry_run: bool = False, stale_days: int | None = None) -> Report:
        return self.vault_board.organize(
            dry_run=dry_run, stale_days=stale_days or self.settings.stale_days
        )

    def rows(self) -> list[BoardRow]:
        """Board rows in reading priority (active and meaningful first), from the file."""
        return self.vault_board.rows()

    def sync(self) -> bool:
        """Refresh the store's mirror of the board if ``memory/index.md`` changed (by
        memvault, another tool or a person). Returns whether it did. Only the vault's owner
        does: another replica's folder may not be the vault."""
        if not self.writes.is_owner():
            return False
        with self._sync_lock:
            # A sync folder's conflict copy of the board first: merged, it is a change.
            merge_board_copies(self.vault_board, removed_here=self._removed_here)
            try:
                stat = self.vault_board.index_path.stat()
                # The inode too: a sync client puts a file in place by renaming, and may
                # give it the other machine's time and the same size.
                mark = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
            except FileNotFoundError:
                mark = None
            if mark == self._board_mark:
                return False
            self.store.replace_board_rows(self.vault_board.board().rows if mark else [])
            self._board_mark = mark
            return True

    def departed(self, board_session_id: str) -> tuple[bool, str | None]:
        """Where a row no longer on the board went: whether it was archived (its archive
        folder exists; otherwise organize removed it), and the host session it was given
        to, whose events remain (None if none was)."""
        try:
            archived = self.vault_board.archive_path(board_session_id).is_dir()
        except BoardError:
            archived = False  # not a Session ID at all
        link = self.store.board_links().get(board_session_id)
        return archived, link[0] if link else None

    def _removed_here(self, board_session_id: str) -> bool:
        """A row this board had and organize took off: its id is tied to a host session
        of this store (ids are given once) and the row is no longer on the board."""
        return self.store.board_session_taken(board_session_id) and not self._row_exists(
            board_session_id
        )

    def entry(self, session_id: str, *, scan: int | None = INJECTIONS_SCANNED) -> BoardEntry | None:
        """A board row with its snapshot, the rows it continues and what memory gave its
        session (among its latest ``scan`` events; None: all); None when the row is not on
        the board."""
        return board_entry(self.store, self.vault_board, session_id, scan=scan)

    def mirrored(self, *, status: str | None = None) -> list[BoardRow]:
        self.sync()
        return self.store.board_rows(status=status)

    def _registration_lock(self, session_id: str) -> threading.Lock:
        # A fixed set of locks striped by session: bounded however many sessions come.
        return self._registration_locks[hash(session_id) % len(self._registration_locks)]

    @vault_write
    def update_derived(
        self,
        board_session_id: str,
        content: Snapshot,
        *,
        topic: str | None = None,
        derived_summary: str | None = None,
        keywords: str | None = None,
        lived: str | None = None,
    ) -> Report:
        """A session's summary into its snapshot and row, through the board's merge policy
        (the Summary only while memvault wrote it). ``lived`` (ISO 8601) is when the
        session's last event happened: the row's Updated At, unless it was updated later."""
        return self.vault_board.update(
            board_session_id,
            content,
            topic=topic,
            derived_summary=derived_summary,
            keywords=keywords,
            at=parse_time(lived or ""),
        )

    def row(self, board_session_id: str) -> BoardRow | None:
        """One row of the board: from the file on the vault's owner, from the database's
        mirror of it elsewhere (another process's folder may not be the vault)."""
        if self.writes.is_owner():
            return self.vault_board.board().get(board_session_id)
        return self.store.board_row(board_session_id)
