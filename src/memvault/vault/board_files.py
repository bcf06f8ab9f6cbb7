"""The files of the session board: reading them, and changing them safely.

``BoardFiles`` knows where the board, snapshots and archive of a vault live, reads them,
and writes them the one way memvault writes anything under ``memory/``: under the memory
lock, against the latest file, atomically, verified by re-reading, and put back as it was
if the operation fails.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from memvault.domain import BoardRow
from memvault.errors import VaultUnwritable
from memvault.language import DEFAULT as DEFAULT_LANGUAGE
from memvault.language import strings
from memvault.vault.board import (
    SESSION_ID,
    UNSET_TOPICS,
    Board,
    BoardFormatError,
    parse_time,
    row_cells,
    rows_in,
)
from memvault.vault.files import (
    OutsideFolder,
    inside,
    memory_lock,
    read_text,
    refused_link,
    write_atomic,
)
from memvault.vault.shared_file import NotText, SharedFile
from memvault.vault.snapshot import CONTINUES, Snapshot, dropped, merge, topic_of
from memvault.vault.table import cell_text

Clock = Callable[[], datetime]
RowChange = Callable[[BoardRow], BoardRow]
_STATUS_ORDER = {"active": 0, "stale": 1, "idle": 2}
_UNWRITABLE = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}
APPEND_TRIES = 8  # changes that find the file changed since it was read; the last rewrites
_KEPT_CHANGING = (
    "memory/index.md kept changing while memvault was changing it (an editor saving it?): "
    "nothing was written; try again"
)


def local_now() -> datetime:
    return datetime.now().astimezone()


class BoardError(ValueError):
    """An operation could not be done; nothing was changed."""


def snapshot_file(sessions_dir: Path, session_id: str) -> Path:
    """Where a session's snapshot lives; ``BoardError`` for anything that is not a Memory
    Session ID or would lead outside ``memory/sessions/`` (a hand-edited or imported row
    can carry any text in its first cell)."""
    if not SESSION_ID.fullmatch(session_id):
        raise BoardError(f"{session_id!r} is not a Memory Session ID (YYYY-MM-DD-HHMM-agent)")
    try:
        return inside(sessions_dir, f"{session_id}.md")
    except OutsideFolder as exc:
        raise BoardError(str(exc)) from None


class BoardFiles:
    """``memory/index.md``, ``memory/sessions/`` and ``memory/archive/`` of one vault."""

    def __init__(
        self,
        vault: Path,
        *,
        clock: Clock = local_now,
        lock_timeout: float = 30.0,
        is_taken: Callable[[str], bool] = lambda session_id: False,
        language: str = DEFAULT_LANGUAGE,
    ):
        self.vault = Path(vault)
        self.words = strings(language)  # what registration writes in a new row
        self.memory_dir = self.vault / "memory"
        self.index_path = self.memory_dir / "index.md"
        self.sessions_dir = self.memory_dir / "sessions"
        self.archive_dir = self.memory_dir / "archive"
        self.clock = clock
        self.lock_timeout = lock_timeout
        # Ids used elsewhere (the store remembers ids whose rows were organized away).
        self.is_taken = is_taken
        self._continues_cache: dict[str, tuple[int, int, list[str]]] = {}
        # The board's text and its rows in reading priority: read again on every call (the
        # file is the truth, a person may edit it), parsed again only when the text changed.
        self._rows_cache: tuple[str | None, tuple[BoardRow, ...]] | None = None

    # -- reading ---------------------------------------------------------------------------

    def board(self) -> Board:
        return Board.parse(self._board_text())

    def snapshot_path(self, session_id: str) -> Path:
        return snapshot_file(self.sessions_dir, session_id)

    def archive_path(self, session_id: str) -> Path:
        """``memory/archive/<id>/``, checked as ``snapshot_path`` is."""
        self.snapshot_path(session_id)
        try:
            return inside(self.archive_dir, session_id)
        except OutsideFolder as exc:
            raise BoardError(str(exc)) from None

    def snapshot_text(self, session_id: str) -> str | None:
        return read_text(self.snapshot_path(session_id))

    def snapshot(self, session_id: str) -> Snapshot | None:
        text = read_text(self.snapshot_path(session_id))
        return Snapshot.parse(text) if text is not None else None

    def rows(self) -> list[BoardRow]:
        """Rows in reading priority: active, then stale, then idle; meaningful topics first,
        then most recently updated. The rows are shared with later calls on the same text:
        read them, do not change them."""
        text = self._board_text()
        cached = self._rows_cache
        if cached is not None and cached[0] == text:
            return list(cached[1])

        def priority(row: BoardRow) -> tuple:
            updated = parse_time(row.updated_at)
            return (
                _STATUS_ORDER.get(row.status, 3),
                row.topic.strip() in UNSET_TOPICS,
                -(updated.timestamp() if updated else 0),
            )

        rows = sorted(Board.parse(text).rows, key=priority)
        self._rows_cache = (text, tuple(rows))
        return rows

    def has_row(self, session_id: str) -> bool:
        return self.board().get(session_id) is not None

    def _continued_sources(self) -> tuple[dict[str, set[str]], set[str]]:
        """(source id → ids of the snapshots whose Continues From names it, ids that have a
        snapshot). Parsed files are cached by modification time and size."""
        sources: dict[str, set[str]] = {}
        try:
            entries = list(os.scandir(self.sessions_dir))
        except FileNotFoundError:
            return sources, set()
        seen = set()
        for entry in entries:
            if not entry.name.endswith(".md") or not entry.is_file():
                continue
            if entry.is_symlink() and refused_link(self.vault, Path(entry.path), "snapshot"):
                continue
            session_id = entry.name[:-3]
            seen.add(session_id)
            stat = entry.stat()
            cached = self._continues_cache.get(session_id)
            if cached and cached[:2] == (stat.st_mtime_ns, stat.st_size):
                continued = cached[2]
            else:
                text = read_text(Path(entry.path)) or ""
                continued = Snapshot.parse(text).items(CONTINUES)
                self._continues_cache[session_id] = (stat.st_mtime_ns, stat.st_size, continued)
            for source in continued:
                sources.setdefault(source.strip(), set()).add(session_id)
        for gone in set(self._continues_cache) - seen:
            del self._continues_cache[gone]
        return sources, seen

    # -- writing ---------------------------------------------------------------------------

    def _now(self, at: datetime | None = None, since: str = "") -> datetime:
        """Now by the board's clock; or ``at`` (when what is written happened then), but
        not before ``since`` (a row's time, when that is later) and never after now. It
        is local time as it was then, summer or winter, as the board's times are read."""
        now = self.clock()
        if at is None:
            return now
        later = parse_time(since)
        return min(at if later is None else max(at, later), now).astimezone()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the memory lock. A folder that cannot be written (a full disk, a read-only
        vault) fails the operation as ``VaultUnwritable``, which callers answer with 503:
        it is not a refusal, and the same operation succeeds once the cause is gone."""
        try:
            with memory_lock(self.memory_dir, timeout=self.lock_timeout):
                yield
        except OSError as exc:
            if exc.errno not in _UNWRITABLE:
                raise
            raise VaultUnwritable.of(self.memory_dir, exc) from None

    @contextmanager
    def _restoring(self, *paths: Path) -> Iterator[None]:
        """Put ``paths`` back as they were if the block fails, so that a failed operation
        leaves the vault as it found it."""
        before = {path: read_text(path) for path in paths}
        try:
            yield
        except BaseException:
            for path, text in before.items():
                if text is None:
                    path.unlink(missing_ok=True)
                elif read_text(path) != text:
                    write_atomic(path, text)
            raise

    def _row(self, board: Board, session_id: str) -> BoardRow:
        row = board.get(session_id)
        if row is None:
            raise BoardError(f"{session_id} is not on the board (memory/index.md)")
        return row

    def _write_board(
        self,
        board: Board,
        *,
        edit: dict[str, RowChange] | None = None,
        remove: Iterable[str] = (),
        remove_when: Callable[[BoardRow], bool] = lambda row: True,
        append: BoardRow | None = None,
    ) -> tuple[list[BoardRow], list[str]]:
        """Change the latest file and verify; returns the rows written and the ids removed.

        Changes are functions of the row as the file has it at the moment of writing. If
        someone edited the file since it was read (people and other tools do not take our
        lock), the changes are applied again to their version, so their edits to other rows
        and other fields stay. A row that vanished meanwhile is an error, never a guess.
        A new row at the end of the table is appended to the file; anything else is a
        rewrite that carries over what others appended meanwhile (``SharedFile``). If the
        written rows do not verify, the change is undone and the board is as it was."""
        edit = edit or {}
        remove = list(remove)
        for attempt in range(APPEND_TRIES):
            with self._shared_index() as shared:
                if shared.text != board.text:
                    board = Board.parse(shared.text)
                before, rows, gone = {}, [], []
                for session_id, change in edit.items():
                    current = board.get(session_id)
                    if current is None:
                        raise BoardError(
                            f"{session_id} left the board while memvault was changing it"
                        )
                    before[session_id] = current
                    rows.append(change(current))
                for sid in remove:
                    if (row := board.get(sid)) is not None and remove_when(row):
                        gone.append(sid)
                last_try = attempt == APPEND_TRIES - 1
                if append is not None and not rows and not gone and board.ends_file:
                    line = board.appended_line(append)
                    if not last_try and not shared.append(line):
                        continue  # someone added to it since: read it again
                    written = shared.text + line
                    if last_try and not shared.replace(written):
                        raise BoardError(_KEPT_CHANGING)
                else:
                    written = board.changed(rows, set(gone))
                    if append is not None:
                        written = Board.parse(written).appended(append)
                    if not shared.replace(written):
                        if last_try:
                            raise BoardError(_KEPT_CHANGING)
                        continue  # saved over meanwhile: read what was saved, again
                wanted = [*rows, *([append] if append else [])]
                try:
                    self._verify_board(wanted, gone)
                except BaseException:
                    self._undo_board(board, before, wanted, gone, written)
                    raise
            return rows, gone
        raise AssertionError("unreachable: the last try rewrites")

    def _shared_index(self) -> SharedFile:
        if refused_link(self.vault, self.index_path, "the board"):
            raise BoardFormatError(
                "memory/index.md is a symbolic link leading out of the vault: memvault "
                "neither reads nor writes the board through it (make it a file in the vault)"
            )
        try:
            return SharedFile(self.index_path)
        except NotText as exc:
            raise BoardFormatError(f"memory/{exc}") from None

    def _verify_board(self, rows: list[BoardRow], gone: list[str]) -> None:
        """The file holds what was meant: each changed row there once with its new values,
        each removed one gone. Lines others added meanwhile are theirs, not a failure."""
        text = self._board_text()
        found = rows_in(text, {row.session_id for row in rows} | set(gone))
        for row in rows:
            wanted = [cell_text(c) for c in row_cells(row)]
            readings = [row_cells(r) for r in found[row.session_id]]
            if readings != [wanted]:
                raise BoardError(
                    f"could not verify the row of {row.session_id}: "
                    + (
                        f"it reads back as {readings[0]}"
                        if len(readings) == 1
                        else f"{len(readings)} rows carry its id"
                    )
                )
        for session_id in gone:
            if found[session_id]:
                raise BoardError(f"could not verify the removal of {session_id}")

    def _undo_board(
        self,
        board: Board,
        before: dict[str, BoardRow],
        wanted: list[BoardRow],
        gone: list[str],
        written: str,
    ) -> None:
        """Take back a board change that did not verify, keeping what others wrote since:
        the board as it was plus their additions, or, if they changed it otherwise, each
        row memvault wrote put back (only where it is still as memvault wrote it)."""
        with self._shared_index() as shared:
            # (A replace refused here means a person saved the board since: theirs stands.)
            if shared.text.startswith(written):
                shared.replace(board.text + shared.text[len(written) :])
                return
            now = Board.parse(shared.text)
            mine = {row.session_id: row for row in wanted}
            restore, drop = [], set()
            for session_id, row in mine.items():
                try:
                    current = now.get(session_id)
                except BoardFormatError:
                    continue
                if current is None or row_cells(current) != [cell_text(c) for c in row_cells(row)]:
                    continue
                if session_id in before:
                    restore.append(before[session_id])
                else:
                    drop.add(session_id)
            text = now.changed(restore, drop)
            for session_id in gone:
                if session_id not in now.row_lines and session_id in board.row_lines:
                    text = Board.parse(text).appended(board.get(session_id))
            if text != shared.text:
                shared.replace(text)

    def _board_text(self) -> str:
        with self._shared_index() as shared:
            return shared.text

    def _write_snapshot(
        self,
        row: BoardRow,
        old: Snapshot,
        content: Snapshot,
        *,
        updated_at: str,
        topic: str | None = None,
        board_summary: str | None = None,
    ) -> Snapshot:
        """Merge ``content`` into ``old`` and write it, verified. ``board_summary`` is the
        row Summary memvault derived now, recorded in the snapshot; None keeps the record."""
        merged = merge(old, content)
        if board_summary is not None:
            merged.board_summary = board_summary
        merged.metadata.update(
            {
                "Session ID": row.session_id,
                "Agent Name": old.metadata.get("Agent Name") or row.agent_name,
                "Topic": topic
                or content.metadata.get("Topic")
                or old.metadata.get("Topic")
                or (row.topic if row.topic not in UNSET_TOPICS else topic_of(merged) or row.topic),
                "Status": "active",
                "Started At": old.metadata.get("Started At") or row.started_at,
                "Updated At": updated_at,
            }
        )
        lost = dropped(old, merged)
        if lost:
            raise BoardError(f"merge would drop: {'; '.join(lost)}")
        path = self.snapshot_path(row.session_id)
        write_atomic(path, merged.render(row.session_id))
        check = self.snapshot(row.session_id)
        if check is None or dropped(old, check) or check.metadata.get("Updated At") != updated_at:
            raise BoardError(f"could not verify {path.relative_to(self.vault)}")
        return merged
