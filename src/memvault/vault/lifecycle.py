"""Session lifecycle on the board: register, update, continue, release, organize, archive.

Every operation takes the memory lock, re-reads the files it changes, changes only the
intended rows and sections, writes atomically, re-reads to verify, and returns a ``Report``
that says what it did. A Session ID is reported only after the write that creates it has
been verified. An operation that fails puts back what it had already written, so the files
are as they were, and its report says what failed.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from memvault.domain import BoardRow
from memvault.vault.archive import render_archive_index
from memvault.vault.board import (
    AUTO_SUMMARIES,
    UNSET_TOPICS,
    Board,
    agent_name,
    format_time,
    is_placeholder_summary,
    parse_time,
)
from memvault.vault.board_files import BoardError, BoardFiles, RowChange
from memvault.vault.files import write_atomic
from memvault.vault.snapshot import (
    CONTEXT,
    CONTINUES,
    Snapshot,
    merge,
    summary_of,
    topic_of,
    unlisted,
)
from memvault.vault.table import cell_text

DEFAULT_STALE_DAYS = 14
_FAILURES = (OSError, ValueError)  # BoardError and BoardFormatError are ValueErrors too


@dataclass(slots=True)
class Report:
    """What an operation did. ``ok`` is False when it did not (``message`` says why)."""

    operation: str
    ok: bool
    session_id: str | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "ok": self.ok,
            "sessionId": self.session_id,
            "message": self.message,
            **self.details,
        }


def host_word(agent: str) -> str:
    """The keyword naming the host of an agent (``cursor-main-agent`` → ``cursor-agent``)."""
    host = agent.removesuffix("main-agent").removesuffix("-").removesuffix("-agent")
    return f"{host}-agent" if host else "agent"


class SessionBoard(BoardFiles):
    """The session lifecycle on the board and snapshots under ``<vault>/memory``."""

    # -- registration ----------------------------------------------------------------------

    def register(
        self,
        agent: str,
        *,
        manual: bool = False,
        topic: str | None = None,
        summary: str | None = None,
        keywords: str | None = None,
        content: Snapshot | None = None,
        at: datetime | None = None,
    ) -> Report:
        """Add a row for a new session: idle for a host's session start, active with a
        snapshot for a manual registration. Never reuses an existing row. The row is
        started (and its id dated) now, or ``at``: when a session's history arrives after
        it was lived (an import, a spool sent days later), the row says when it began."""
        operation = "register-manual" if manual else "register"
        try:
            agent = agent_name(agent)
            with self._locked():
                return self._register(agent, manual, topic, summary, keywords, content, at)
        except _FAILURES as exc:
            return Report(operation, False, message=f"not registered: {exc}")

    def _register(self, agent, manual, topic, summary, keywords, content, at=None) -> Report:
        now = self._now(at)
        stamp = format_time(now)
        board = self.board()
        session_id = self._new_id(board, now, agent)
        summary = _one_line(summary)
        derived = None
        if manual:
            content = content or Snapshot()
            topic = topic or topic_of(content) or self.words.unset_topic
            derived = None if summary else summary_of(content) or None
            summary = summary or derived or self.words.manual_summary
            keywords = keywords or f"manual-registration, {host_word(agent)}, session-snapshot"
            status = "active"
        else:
            topic = topic or self.words.unset_topic
            summary = summary or self.words.auto_summary
            keywords = keywords or f"sessionStart, {host_word(agent)}"
            status = "idle"
        row = BoardRow(session_id, agent, topic, summary, keywords, status, [], stamp, stamp)
        with self._restoring(self.snapshot_path(session_id)):
            if manual:
                self._write_snapshot(
                    row, Snapshot(), content, updated_at=stamp, board_summary=derived
                )
            self._write_board(board, append=row)
        return Report(
            "register-manual" if manual else "register",
            True,
            session_id,
            f"Your Memory Session ID is: {session_id}",
            {"status": status, "snapshot": manual},
        )

    def _new_id(self, board: Board, now: datetime, agent: str) -> str:
        """``YYYY-MM-DD-HHMM-<agent>``; a second one in the same minute gets ``-2``, then
        ``-3``…, skipping ids on the board, with a snapshot, in the archive, or still tied
        to a host session in the store."""
        base = f"{now:%Y-%m-%d-%H%M}-{agent}"
        candidate, n = base, 1
        while (
            candidate in board.row_lines
            or self.snapshot_path(candidate).exists()
            or self.archive_path(candidate).exists()
            or self.is_taken(candidate)
        ):
            n += 1
            candidate = f"{base}-{n}"
        return candidate

    # -- update ----------------------------------------------------------------------------

    def update(
        self,
        session_id: str,
        content: Snapshot,
        *,
        topic: str | None = None,
        summary: str | None = None,
        keywords: str | None = None,
        derived_summary: str | None = None,
        at: datetime | None = None,
    ) -> Report:
        """Merge ``content`` into the session's snapshot (creating it from the template if
        needed) and update its row: active, Updated At now, or ``at`` (when the update
        tells of what was done then: a session's history summarized after it was lived)
        unless the row was updated later than that.

        The row's Summary becomes ``summary`` when one is given. Otherwise it follows the
        snapshot, as ``derived_summary`` (what memvault made of the session, e.g. the
        pipeline's current context) or the gist of Current Context, but only while the
        Summary is memvault's: a placeholder, or the one it last derived (recorded in the
        snapshot). A Summary a person edited, an update supplied or a registration was
        given stays as it is."""
        try:
            with self._locked():
                board = self.board()
                row = self._row(board, session_id)
                with self._restoring(self.snapshot_path(session_id)):
                    change = self._merge(
                        row, content, topic, summary, keywords, derived_summary, at
                    )
                    (written,), _ = self._write_board(board, edit={session_id: change})
                return Report(
                    "update",
                    True,
                    session_id,
                    "snapshot and row updated",
                    {"status": written.status, "updatedAt": written.updated_at},
                )
        except _FAILURES as exc:
            return Report("update", False, session_id, f"update incomplete: {exc}")

    def _merge(self, row, content, topic, summary, keywords, derived_summary=None, at=None):
        """Merge ``content`` into the snapshot (written and verified here). Returns how the
        row changes (a ``RowChange``), applied to the row as the board has it then."""
        stamp = format_time(self._now(at, since=row.updated_at))
        old = self.snapshot(row.session_id) or Snapshot()
        given = _one_line(summary)
        derived = _one_line(derived_summary) or _one_line(summary_of(merge(old, content)))
        follows = not given and bool(derived) and _memvaults_summary(row.summary, old)
        merged = self._write_snapshot(
            row,
            old,
            content,
            updated_at=stamp,
            topic=topic,
            board_summary=derived if follows else None,
        )
        explicit_topic = topic or content.metadata.get("Topic")

        def new_summary(current: BoardRow) -> str:
            if given:
                return given
            # Edited since it was read under the lock (people do not take it): theirs.
            if follows and current.summary == row.summary:
                return derived
            return current.summary

        def change(current: BoardRow) -> BoardRow:
            new_topic = explicit_topic or current.topic
            if new_topic.strip() in UNSET_TOPICS:
                new_topic = topic_of(merged) or current.topic
            return current.with_(
                status="active",
                updated_at=stamp,
                topic=new_topic,
                summary=new_summary(current),
                keywords=keywords or current.keywords,
            )

        return change

    # -- references ------------------------------------------------------------------------

    def continue_from(self, current: str | None, source: str, *, agent: str) -> Report:
        """Record that ``current`` continues ``source``: Continues From in the current
        snapshot, Referenced By on the source row. Registers ``current`` if it has no id."""
        try:
            with self._locked():
                board = self.board()
                source_row = self._row(board, source)
                registered = None
                if current is None:
                    topic = source_row.topic if source_row.topic not in UNSET_TOPICS else None
                    content = Snapshot(sections={CONTEXT: [_continuing(source_row)]})
                    registered = self._register(agent_name(agent), True, topic, None, None, content)
                    current = registered.session_id
                    board = self.board()
                if current == source:
                    raise BoardError("a session cannot continue itself")
                current_row = self._row(board, current)
                content = Snapshot(
                    sections={CONTINUES: [source], CONTEXT: [_continuing(source_row)]}
                )
                # A session that had no topic yet takes up the one it continues.
                topic = source_row.topic if current_row.topic in UNSET_TOPICS else None
                with self._restoring(self.snapshot_path(current)):
                    change = self._merge(current_row, content, topic, None, None)
                    # Both rows change in one write: the reference lands with the update.
                    self._write_board(
                        board,
                        edit={current: change, source: _with_reference(current)},
                    )
                message = f"{current} continues {source}"
                if registered is not None:
                    message = f"{registered.message}\n{message}"
                details = {"source": source, "registered": registered is not None}
                return Report("continue", True, current, message, details)
        except _FAILURES as exc:
            return Report(
                "continue", False, current, f"continuation incomplete: {exc}", {"source": source}
            )

    def release(self, current: str, source: str) -> Report:
        """Undo a continuation: ``current`` leaves the source's Referenced By, the source
        leaves the current snapshot's Continues From."""
        try:
            with self._locked():
                board = self.board()
                source_row = board.get(source)
                referenced = source_row is not None and current in source_row.referenced_by
                with self._restoring(self.snapshot_path(current)):
                    snapshot_changed = self._drop_continuation(current, source)
                    if referenced:
                        self._write_board(board, edit={source: _without_reference(current)})
                if source_row is None and not snapshot_changed:
                    raise BoardError(f"{source} is not on the board and not referenced")
                return Report(
                    "release",
                    True,
                    current,
                    f"{current} no longer continues {source}",
                    {
                        "source": source,
                        "rowUpdated": referenced,
                        "snapshotUpdated": snapshot_changed,
                    },
                )
        except _FAILURES as exc:
            return Report(
                "release", False, current, f"release incomplete: {exc}", {"source": source}
            )

    def _drop_continuation(self, current: str, source: str) -> bool:
        path = self.snapshot_path(current)
        snapshot = self.snapshot(current)
        if snapshot is None or source not in snapshot.items(CONTINUES):
            return False
        snapshot.sections[CONTINUES] = [s for s in snapshot.items(CONTINUES) if s != source]
        if snapshot.properties is None:
            snapshot.properties = []  # written by memvault now: with its frontmatter
        write_atomic(path, snapshot.render(current))
        check = self.snapshot(current)
        if check is None or source in check.items(CONTINUES):
            raise BoardError(f"could not verify {path.name} after removing {source}")
        return True

    # -- organize --------------------------------------------------------------------------

    def organize(self, *, dry_run: bool = False, stale_days: int = DEFAULT_STALE_DAYS) -> Report:
        """Delete unreferenced idle rows, mark overdue active rows stale, archive nothing.

        An idle row that has a snapshot is an inconsistency: organize stops and changes
        nothing until it is resolved."""
        try:
            with self._locked():
                return self._organize(dry_run, stale_days)
        except _FAILURES as exc:
            return Report("organize", False, message=f"organize stopped: {exc}")

    def _organize(self, dry_run: bool, stale_days: int) -> Report:
        now = self.clock()
        board = self.board()
        fallback, snapshots = self._continued_sources()
        deleted, stale, kept, protected, inconsistent, unknown = [], [], [], {}, [], []
        for row in board.rows:
            refs = list(row.referenced_by) or sorted(fallback.get(row.session_id, ()))
            has_snapshot = row.session_id in snapshots
            if refs and row.status in ("idle", "active", "stale"):
                protected[row.session_id] = refs
            if row.status == "idle":
                if not refs:
                    (inconsistent if has_snapshot else deleted).append(row.session_id)
            elif row.status == "active":
                if not refs and (
                    _overdue(row, now, stale_days)
                    and (has_snapshot or row.summary.strip() not in ("", *AUTO_SUMMARIES))
                ):
                    stale.append(row.session_id)
                else:
                    kept.append(row.session_id)
            elif row.status != "stale":
                unknown.append(row.session_id)
        details = {
            "dryRun": dry_run,
            "staleDays": stale_days,
            "deleted": deleted,
            "markedStale": stale,
            "keptActive": kept,
            "protected": protected,
            "inconsistent": inconsistent,
            "unknownStatus": unknown,
            "unreadableRows": board.unreadable,
        }
        if inconsistent:
            details.update(deleted=[], markedStale=[])
            return Report(
                "organize",
                False,
                message="organize stopped: idle rows have session files (promote them with an "
                "update or remove the files): " + ", ".join(inconsistent),
                details=details,
            )
        if not dry_run and (deleted or stale):
            # Applied to the rows as they are when written: a row someone promoted or
            # referenced in the meantime is neither deleted nor marked stale.
            written, gone = self._write_board(
                board,
                edit={session_id: _mark_stale for session_id in stale},
                remove=deleted,
                remove_when=lambda row: row.status == "idle" and not row.referenced_by,
            )
            deleted = details["deleted"] = gone
            stale = details["markedStale"] = [r.session_id for r in written if r.status == "stale"]
        verb = "would delete" if dry_run else "deleted"
        message = (
            f"{verb} {len(deleted)} idle, {'would mark' if dry_run else 'marked'} "
            f"{len(stale)} stale, kept {len(kept)} active, {len(protected)} protected"
        )
        return Report("organize", True, message=message, details=details)

    # -- archive ---------------------------------------------------------------------------

    def archive(self, session_id: str, *, force: bool = False) -> Report:
        """Move a finished session into ``memory/archive/<id>/`` and off the board."""
        try:
            with self._locked():
                return self._archive(session_id, force)
        except _FAILURES as exc:
            return Report("archive", False, session_id, f"not archived, the row stays: {exc}")

    def _archive(self, session_id: str, force: bool) -> Report:
        board = self.board()
        row = self._row(board, session_id)
        path = self.snapshot_path(session_id)
        if row.referenced_by and not force:
            raise BoardError(
                f"still referenced by {', '.join(row.referenced_by)}; release those references "
                "first (or force)"
            )
        if not path.exists():
            self._write_board(board, remove=[session_id])
            return Report(
                "archive",
                True,
                session_id,
                f"{session_id} had no session file: row deleted, nothing archived",
                {"action": "deleted"},
            )
        snapshot = self.snapshot(session_id) or Snapshot()
        sources = [s for s in snapshot.items(CONTINUES) if s != session_id]
        folder = self.archive_path(session_id)
        if folder.exists():
            raise BoardError(f"{folder.relative_to(self.vault)} already exists")
        stamp = format_time(self.clock())
        folder.mkdir(parents=True)
        try:
            write_atomic(folder / "index.md", render_archive_index(row, stamp))
            os.replace(path, folder / "session.md")
            referencing = {
                source: _without_reference(session_id)
                for source in sources
                if (source_row := board.get(source)) is not None
                and session_id in source_row.referenced_by
            }
            # The references and the row go in one write: all of it lands, or none.
            released, _ = self._write_board(board, edit=referencing, remove=[session_id])
        except BaseException:
            if (folder / "session.md").exists() and not path.exists():
                os.replace(folder / "session.md", path)
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return Report(
            "archive",
            True,
            session_id,
            f"{session_id} archived",
            {
                "action": "archived",
                "archivedAt": stamp,
                "path": (folder / "index.md").relative_to(self.vault).as_posix(),
                "releasedFrom": [r.session_id for r in released],
            },
        )


def _one_line(summary: str | None) -> str:
    """A Summary as its cell holds it: one line, no list marker."""
    return cell_text(unlisted(summary or ""))


def _memvaults_summary(summary: str, old: Snapshot) -> bool:
    """Whether a row's Summary is memvault's to replace: a placeholder, or the Summary
    memvault last derived (a snapshot written before that was recorded: its gist)."""
    if is_placeholder_summary(summary):
        return True
    recorded = old.board_summary if old.board_summary is not None else summary_of(old)
    return cell_text(summary) == cell_text(recorded)


def _with_reference(session_id: str) -> RowChange:
    def change(row: BoardRow) -> BoardRow:
        if session_id in row.referenced_by:
            return row
        return row.with_(referenced_by=[*row.referenced_by, session_id])

    return change


def _without_reference(session_id: str) -> RowChange:
    return lambda row: row.with_(referenced_by=[r for r in row.referenced_by if r != session_id])


def _mark_stale(row: BoardRow) -> BoardRow:
    return row.with_(status="stale") if row.status == "active" else row


def _continuing(source: BoardRow) -> str:
    topic = f" ({source.topic})" if source.topic not in UNSET_TOPICS else ""
    return f"Continues work from {source.session_id}{topic}."


def _overdue(row: BoardRow, now: datetime, days: int) -> bool:
    updated = parse_time(row.updated_at)
    return updated is not None and now - updated > timedelta(days=days)
