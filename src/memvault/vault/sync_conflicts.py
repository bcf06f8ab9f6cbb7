"""Conflict copies a sync folder leaves in the vault, and merging the board's back.

A vault kept in Google Drive, OneDrive, iCloud, Dropbox or Syncthing and written by two
machines gets a second file when both changed one before the sync met: ``index (1).md``
(Google Drive, Windows), ``index 2.md`` (iCloud), ``index (conflicted copy).md`` and
``index (Mac's conflicted copy 2026-12-04).md`` (Dropbox, Nextcloud),
``index.sync-conflict-20261204-101010-ABCDEFG.md`` (Syncthing), ``index-DESKTOP-ABC.md``
(OneDrive, the other computer's name). This module recognises them by name.

A copy of the board (``memory/index.md``) is merged back (:func:`merge_boards`): the union
of rows by Session ID, the newer ``Updated At`` winning per row (ours on a tie), rows
archived on either side or organized away here staying gone, and the copy's hand-written
lines that the board lacks kept. The copy is then moved to ``memory/sync-conflicts/`` with a
note of what was merged. A copy of a snapshot holds prose no rule can merge: it is only
reported (doctor, ``/health``, the viewer), with what to do.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memvault.domain import BoardRow
from memvault.vault.board import Board, BoardFormatError, parse_time
from memvault.vault.board_files import BoardFiles
from memvault.vault.files import memory_lock, read_text
from memvault.vault.shared_file import NotText, SharedFile

log = logging.getLogger(__name__)

MERGED_FOLDER = "sync-conflicts"  # under memory/: merged copies and their notes
_MARK = (
    r"(?:"
    r" \(\d{1,3}\)"  # Google Drive, Windows: "index (1).md"
    r"| \d{1,3}"  # iCloud: "index 2.md"
    r"| \([^()]*conflict[^()]*\)"  # Dropbox, Nextcloud, ownCloud: "(… conflicted copy …)"
    r"|\.sync-conflict-\d{8}-\d{6}-[A-Z0-9]{7}"  # Syncthing
    # OneDrive: the other computer's name, in capitals (at least one letter: "-2" ends
    # many a Session ID)
    r"|-(?-i:(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{0,62})"
    r")"
)


def copy_pattern(stem: str) -> re.Pattern[str]:
    """The names sync clients give a conflict copy of ``<stem>.md``."""
    return re.compile(rf"{re.escape(stem)}{_MARK}\.md", re.IGNORECASE)


_BOARD_COPY = copy_pattern("index")
_SNAPSHOT_ID = r"(?P<id>\d{4}-\d{2}-\d{2}-\d{4}-[a-z0-9-]+?)"
_SNAPSHOT_COPY = re.compile(rf"{_SNAPSHOT_ID}{_MARK}\.md", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ConflictCopy:
    """A conflict copy found in the vault: its path under the vault, what it copies, and
    what a person should do about it."""

    path: str  # relative to the vault, e.g. memory/sessions/<id> (1).md
    of: str  # the file it is a copy of, e.g. memory/sessions/<id>.md
    advice: str


@dataclass(slots=True)
class Merged:
    """What merging one copy of the board did, row by row."""

    copy: str
    added: list[str] = field(default_factory=list)  # rows only the copy had
    newer: list[str] = field(default_factory=list)  # rows whose copy was updated later
    gone: list[str] = field(default_factory=list)  # rows archived or organized away
    prose: list[str] = field(default_factory=list)  # hand-written lines kept from the copy

    def note(self, moment: datetime) -> str:
        """The note left beside the moved copy, for the person who wonders what happened."""

        def listed(title: str, items: list[str]) -> list[str]:
            return [f"## {title}", "", *(f"- {i}" for i in items or ["(none)"]), ""]

        return "\n".join(
            [
                f"# Merged sync conflict copy: {self.copy}",
                "",
                f"memvault merged this copy of the session board into memory/index.md on "
                f"{moment:%Y-%m-%d %H:%M}. The copy itself is kept here unchanged; delete it "
                "and this note once you are satisfied.",
                "",
                *listed("Rows only the copy had (added)", self.added),
                *listed("Rows the copy had updated later (taken from the copy)", self.newer),
                *listed("Rows archived or organized away (left out)", self.gone),
                *listed("Hand-written lines only the copy had (kept)", self.prose),
            ]
        )


def board_copies(memory_dir: Path) -> list[Path]:
    """Conflict copies of ``memory/index.md``, oldest name first."""
    return _matching(memory_dir, _BOARD_COPY)


def conflict_copies(vault: Path) -> list[ConflictCopy]:
    """Every conflict copy of the board or a snapshot waiting in the vault's ``memory/``."""
    memory_dir = vault / "memory"
    found = [
        ConflictCopy(
            f"memory/{path.name}",
            "memory/index.md",
            "memvault merges a copy of the board by itself while the server runs; this one "
            "could not be merged (see the server's log). Compare it with memory/index.md, "
            "copy over the rows you want, then delete it.",
        )
        for path in board_copies(memory_dir)
    ]
    sessions = memory_dir / "sessions"
    for path in _matching(sessions, _SNAPSHOT_COPY):
        session_id = _SNAPSHOT_COPY.fullmatch(path.name)["id"]  # type: ignore[index]
        found.append(
            ConflictCopy(
                f"memory/sessions/{path.name}",
                f"memory/sessions/{session_id}.md",
                f"two machines changed the snapshot of {session_id} at once. Open both in "
                f"Obsidian, carry what the copy has that memory/sessions/{session_id}.md "
                "lacks into it, then delete the copy.",
            )
        )
    return found


def merge_board_copies(
    files: BoardFiles, *, removed_here: Callable[[str], bool] = lambda session_id: False
) -> list[Merged]:
    """Merge every conflict copy of ``memory/index.md`` into it, under the memory lock,
    and move each aside with its note. A copy that cannot be merged (a duplicated or broken
    row on either side) stays where it is, logged, for doctor to report."""
    copies = board_copies(files.memory_dir)
    if not copies:
        return []
    done = []
    with memory_lock(files.memory_dir, timeout=files.lock_timeout):
        for copy in copies:
            text = read_text(copy)
            if text is None:
                continue
            try:
                with SharedFile(files.index_path) as shared:
                    merged_text, merged = merge_boards(
                        Board.parse(shared.text),
                        Board.parse(text),
                        copy_name=copy.name,
                        archived=lambda sid: (files.archive_dir / sid).is_dir(),
                        removed_here=removed_here,
                    )
                    if merged_text != shared.text and not shared.replace(merged_text):
                        # The board was saved meanwhile: the copy stays for the next look.
                        log.info("the board changed while merging memory/%s", copy.name)
                        continue
            except (BoardFormatError, NotText) as exc:
                log.warning("could not merge the sync conflict copy memory/%s: %s", copy.name, exc)
                continue
            move_aside(copy, files.memory_dir, merged, files.clock())
            log.info(
                "merged the sync conflict copy memory/%s into the board: %d added, %d newer, "
                "%d left out",
                copy.name,
                len(merged.added),
                len(merged.newer),
                len(merged.gone),
            )
            done.append(merged)
    return done


def merge_boards(
    main: Board,
    copy: Board,
    *,
    copy_name: str,
    archived: Callable[[str], bool],
    removed_here: Callable[[str], bool],
) -> tuple[str, Merged]:
    """The board ``main`` with ``copy`` merged in, and what was merged. ``archived`` says a
    row was archived (its archive folder exists, on this side or synced from the other);
    ``removed_here`` that a row was on this board once and organize took it off.
    ``BoardFormatError`` when either board has a duplicated or broken row."""
    merged = Merged(copy_name)
    theirs = {row.session_id: row for row in copy.rows}
    for session_id in copy.row_lines:
        copy.get(session_id)  # refuses a duplicated or broken row
    replace, remove = [], set()
    for row in main.rows:
        main.get(row.session_id)
        other = theirs.get(row.session_id)
        if archived(row.session_id):
            remove.add(row.session_id)
            merged.gone.append(row.session_id)
        elif other is not None and _later(other, row):
            replace.append(other)
            merged.newer.append(row.session_id)
    text = main.changed(replace, remove)
    for session_id, row in theirs.items():
        if session_id in main.row_lines:
            continue
        if archived(session_id) or removed_here(session_id):
            merged.gone.append(session_id)
            continue
        text = Board.parse(text).appended(row)
        merged.added.append(session_id)
    return _with_prose(text, copy, merged), merged


def move_aside(copy: Path, memory_dir: Path, merged: Merged, moment: datetime) -> Path:
    """Move a merged copy to ``memory/sync-conflicts/`` beside a note of what was merged;
    returns where it went. A name taken already gets the time in front."""
    folder = memory_dir / MERGED_FOLDER
    folder.mkdir(exist_ok=True)
    target = folder / copy.name
    if target.exists():
        target = folder / f"{moment:%Y%m%d-%H%M%S} {copy.name}"
    os.replace(copy, target)
    note = target.with_name(f"{target.stem} (what was merged).md")
    note.write_text(merged.note(moment), encoding="utf-8")
    return target


def _later(theirs: BoardRow, ours: BoardRow) -> bool:
    mine, other = parse_time(ours.updated_at), parse_time(theirs.updated_at)
    if other is None:
        return False
    return mine is None or other > mine


def _with_prose(text: str, copy: Board, merged: Merged) -> str:
    """``text`` with the lines outside the copy's table that it lacks: those before the
    table go just above the table's header, those after it at the end."""
    have = {line.strip() for line in text.split("\n")}
    header = copy.table_start - 2
    before = [line for line in copy.lines[: max(header, 0)] if _missing(line, have)]
    after = [line for line in copy.lines[copy.table_end :] if _missing(line, have)]
    merged.prose = [line.strip() for line in before + after]
    if not before and not after:
        return text
    board = Board.parse(text)
    lines, newline = list(board.lines), board.newline
    if after:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += newline
        lines += [newline, *(line.rstrip("\r\n") + newline for line in after)]
    if before:
        at = max(board.table_start - 2, 0)
        lines[at:at] = [*(line.rstrip("\r\n") + newline for line in before), newline]
    return "".join(lines)


def _missing(line: str, have: set[str]) -> bool:
    return bool(line.strip()) and line.strip() not in have


def _matching(folder: Path, pattern: re.Pattern[str]) -> list[Path]:
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.is_file())
    except OSError:
        return []
    return [folder / name for name in names if pattern.fullmatch(name)]
