"""Putting an archive's files into the vault: fragments, the board and snapshots, each
by the import's strategy.

Every write is atomic and happens under the lock of the folder it changes, the lock every
memvault writer takes. A file already there with the same text is left alone. Otherwise:

- ``merge``: a fragment goes through the fragment write path when the vault already had a
  near-duplicate of it (or a different file at its path), so the two merge; else it is
  written as it is. The board gets the rows it lacks; a different snapshot is kept.
- ``skip``: only what is missing is written; no existing file is touched.
- ``replace``: the archive's file is written over the one at its path.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from memvault.analyzer import similarity
from memvault.archive.format import (
    BOARD_PATH,
    SESSIONS_FOLDER,
    UnsafePath,
    relative_path,
    snapshot_path,
)
from memvault.archive.report import At, ImportReport
from memvault.errors import InvalidInput
from memvault.memory import Memory
from memvault.vault import frontmatter
from memvault.vault.board import Board, BoardFormatError
from memvault.vault.files import OutsideFolder, inside, memory_lock, read_text, write_atomic
from memvault.vault.fragments import (
    FORBIDDEN_FIELDS,
    PROJECTS,
    RESERVED,
    TAG,
    Fragment,
)
from memvault.vault.remember import MANAGED, Draft, facts_from

MISSING, SAME, DIFFERENT = "missing", "same", "different"
KEPT = "a different file is already at its path: kept"
BOARD_ATTEMPTS = 5
SESSIONS = Path(*SESSIONS_FOLDER)


class VaultFiles:
    def __init__(self, memory: Memory, strategy: str, report: ImportReport) -> None:
        self.memory = memory
        self.strategy = strategy
        self.report = report
        self.vault = memory.settings.vault_path
        self.folder = memory.settings.fragments_path
        self.board_written = False
        # What each project's fragments said before the import: what a fragment of the
        # archive is compared with. Taken before the first fragment is written, so two
        # alike fragments of the archive itself both arrive as they are.
        self._before: dict[str, list[str]] | None = None
        self._sources: set[str] | None = None

    def _placed(self, kind: str, record: dict[str, Any], at: At) -> tuple[Path, str] | None:
        """Where a fragment's or a snapshot's file goes and its text; None (and the record
        refused) when its path leaves its folder or its text is not a string."""
        path = record.get("path")
        try:
            if kind == "fragment":
                target = _within(self.folder, relative_path(path, under=self.folder))
            else:
                target = _within(self.vault, snapshot_path(path, vault=self.vault))
        except (UnsafePath, OutsideFolder) as exc:
            self.report.refuse(kind, str(exc), at)
            return None
        text = record.get("text")
        if not isinstance(text, str):
            self.report.refuse(kind, "`text` must be a string", at)
            return None
        return target, text

    # -- fragments ------------------------------------------------------------------------

    def fragment(self, record: dict[str, Any], at: At) -> None:
        placed = self._placed("fragment", record, at)
        if placed is None:
            return
        target, text = placed
        reserved = target.relative_to(self.folder).parts[0] in RESERVED
        merging = self.strategy == "merge" and not reserved
        if merging:
            self._remember_before()
        with memory_lock(self.folder):
            state = _state(target, text)
            if state == SAME:
                self.report.count("fragment", "existing")
                return
            if state == MISSING and not (merging and self._has_near_duplicate(text)):
                write_atomic(target, text)
                self.report.count("fragment", "new")
                self._written(target)
                return
            if state == DIFFERENT and self.strategy == "replace":
                write_atomic(target, text)
                self.report.count("fragment", "replaced")
                self._written(target)
                return
            if state == DIFFERENT and not merging:
                self.report.skip("fragment", KEPT)
                return
        # Through the write path (it takes the folder's lock itself): the fragment merges
        # into its near-duplicate, or is written anew if the write path finds none.
        try:
            done = self.memory.fragments.remember(fragment_draft(text))
        except (InvalidInput, frontmatter.FrontmatterError) as exc:
            message = exc.message if isinstance(exc, InvalidInput) else str(exc)
            self.report.refuse("fragment", f"cannot be merged: {message}", at)
            return
        self.report.count("fragment", "merged" if done.action == "merged" else "new")

    def sources(self) -> set[str]:
        """Every ``source`` and ``sources`` named by a fragment (archived ones included)."""
        if self._sources is None:
            self._sources = set()
            for path in _fragment_files(self.folder, live_only=False):
                try:
                    props = frontmatter.read(read_text(path) or "")
                except (OSError, UnicodeDecodeError, frontmatter.FrontmatterError):
                    continue
                listed = props.get("sources")
                found = [*listed] if isinstance(listed, list) else []
                self._sources.update(str(s) for s in [props.get("source"), *found] if s)
        return self._sources

    def _remember_before(self) -> None:
        if self._before is not None:
            return
        self._before = {}
        for path in _fragment_files(self.folder, live_only=True):
            try:
                fragment = Fragment.read(path)
            except (OSError, UnicodeDecodeError, frontmatter.FrontmatterError):
                continue
            text = _comparable(fragment.summary, facts_from(fragment.body))
            self._before.setdefault(fragment.project.strip(), []).append(text)

    def _has_near_duplicate(self, text: str) -> bool:
        """Whether a fragment of the same project, there before the import, says nearly
        the same (by words, as the write path measures without an embedding model)."""
        try:
            props = frontmatter.read(text)
        except frontmatter.FrontmatterError:
            return False
        known = (self._before or {}).get(str(props.get("project") or "").strip())
        if not known:
            return False
        _, body = frontmatter.split(text)
        mine = _comparable(str(props.get("summary") or ""), facts_from(body))
        threshold = self.memory.settings.dedup_threshold
        return any(similarity(mine, theirs) > threshold for theirs in known)

    def _written(self, target: Path) -> None:
        """Index a fragment written as it is, and add a live one to the graph, as the
        write path does for its own."""
        top = target.relative_to(self.folder).parts[0]
        if top != PROJECTS:
            self.memory.fragments.index_fragment(target)
        if top not in RESERVED:
            self.memory.fragments.graph_fragment(target)

    # -- the board ------------------------------------------------------------------------

    def board(self, record: dict[str, Any], at: At) -> None:
        path, text = record.get("path", BOARD_PATH), record.get("text")
        if path != BOARD_PATH:
            self.report.refuse("board", f"the board's path must be {BOARD_PATH}, not {path!r}", at)
            return
        if not isinstance(text, str):
            self.report.refuse("board", "`text` must be a string", at)
            return
        try:
            imported = Board.parse(text)
        except BoardFormatError as exc:
            self.report.refuse("board", str(exc), at)
            return
        strays = [_stray_id(self.vault, sid) for sid in imported.row_lines]
        strays = [problem for problem in strays if problem]
        if strays:
            self.report.refuse("board", "; ".join(strays[:5]), at)
            return
        target = self.vault / BOARD_PATH
        with memory_lock(target.parent):
            for _ in range(BOARD_ATTEMPTS):
                try:
                    current = read_text(target)
                except UnicodeDecodeError:
                    self.report.refuse("board", f"{BOARD_PATH} in the vault is not UTF-8", at)
                    return
                try:
                    written = self._board(imported, current)
                except BoardFormatError as exc:
                    self.report.refuse("board", f"the vault's board: {exc}", at)
                    return
                if written is None:
                    return
                if read_text(target) != current:
                    continue  # edited meanwhile (people do not take our lock): again
                write_atomic(target, written[0])
                for outcome, n in written[1].items():
                    self.report.count("board", outcome, n)
                self.board_written = True
                return
        self.report.refuse("board", f"{BOARD_PATH} kept changing while it was imported", at)

    def _board(self, imported: Board, current: str | None) -> tuple[str, dict[str, int]] | None:
        """The board file to write and its rows' outcomes; None when nothing is written
        (the outcomes are counted then). Rows are counted by Session ID."""
        ids = list(imported.row_lines)
        if current is None:
            return imported.text, {"new": len(ids)}
        if current == imported.text:
            self.report.count("board", "existing", len(ids))
            return None
        if self.strategy == "replace":
            present = _row_ids(current)
            replaced = sum(1 for sid in ids if sid in present)
            return imported.text, {"replaced": replaced, "new": len(ids) - replaced}
        present = Board.parse(current).row_lines
        missing = [sid for sid in ids if sid not in present]
        self.report.count("board", "existing", len(ids) - len(missing))
        if self.strategy == "skip":
            if missing:
                reason = "a row the vault's board lacks: skip leaves the board as it is"
                self.report.skip("board", reason, len(missing))
            return None
        if not missing:
            return None
        lines = [imported.lines[i] for sid in missing for i in imported.row_lines[sid]]
        return with_rows(current, lines), {"new": len(missing)}

    # -- snapshots ------------------------------------------------------------------------

    def snapshot(self, record: dict[str, Any], at: At) -> None:
        placed = self._placed("snapshot", record, at)
        if placed is None:
            return
        target, text = placed
        with memory_lock(self.vault / "memory"):
            state = _state(target, text)
            if state == SAME:
                self.report.count("snapshot", "existing")
            elif state == MISSING:
                write_atomic(target, text)
                self.report.count("snapshot", "new")
            elif self.strategy == "replace":
                write_atomic(target, text)
                self.report.count("snapshot", "replaced")
            else:
                self.report.skip("snapshot", KEPT)


def fragment_draft(text: str) -> Draft:
    """A fragment file as the write path takes it: its properties and its fact lines,
    dated today (a merge is an update)."""
    props = frontmatter.read(text)
    _, body = frontmatter.split(text)
    tags = props.get("tags")
    tag_list = tags if isinstance(tags, list) else str(tags or "").split(",")
    return Draft(
        project=str(props.get("project") or "").strip(),
        summary=" ".join(str(props.get("summary") or "").split()),
        facts=facts_from(body),
        importance=_fraction(props.get("importance"), 0.5),
        confidence=_fraction(props.get("confidence"), None),
        source=str(props["source"]) if props.get("source") else None,
        tags=[str(t).strip() for t in tag_list if str(t).strip() not in ("", TAG)],
        properties={
            key: value
            for key, value in props.items()
            if key not in MANAGED and key not in FORBIDDEN_FIELDS
        },
    )


def with_rows(text: str, lines: list[str]) -> str:
    """The board ``text`` with row ``lines`` (as they were written) added at the end of its
    table; every other byte unchanged."""
    board = Board.parse(text)
    out = list(board.lines)
    end = board.table_end
    if end > 0 and not out[end - 1].endswith("\n"):
        out[end - 1] += board.newline
    out[end:end] = [line.rstrip("\r\n") + board.newline for line in lines]
    return "".join(out)


def _within(folder: Path, target: Path) -> Path:
    """``target``, checked once more with the file itself resolved: a file of the vault
    that is a link to elsewhere is neither read nor written through."""
    return inside(folder, target.relative_to(folder))


def _stray_id(vault: Path, session_id: str) -> str | None:
    """Why a board row's Session ID cannot be imported, or None: each one names a snapshot,
    ``memory/sessions/<id>.md``, so it must be a single name inside that folder."""
    try:
        inside(vault / SESSIONS, f"{session_id}.md")
    except OutsideFolder as exc:
        return f"board row {session_id!r} is refused: its snapshot {exc}"
    if "/" in session_id or "\\" in session_id:
        return f"board row {session_id!r} is refused: a Session ID is one name, without /"
    return None


def _row_ids(text: str) -> set[str]:
    try:
        return set(Board.parse(text).row_lines)
    except BoardFormatError:
        return set()


def _fraction(value: Any, default: float | None) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        return default
    return float(value)


def _comparable(summary: str, facts: list[str]) -> str:
    return "\n".join([summary, *facts])


def _state(path: Path, text: str) -> str:
    try:
        current = read_text(path)
    except UnicodeDecodeError:
        return DIFFERENT
    if current is None:
        return MISSING
    return SAME if current == text else DIFFERENT


def _fragment_files(folder: Path, *, live_only: bool) -> list[Path]:
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.rglob("*.md")):
        parts = PurePosixPath(path.relative_to(folder).as_posix()).parts
        if any(part.startswith(".") for part in parts):
            continue
        if live_only and parts[0] in RESERVED:
            continue
        found.append(path)
    return found
