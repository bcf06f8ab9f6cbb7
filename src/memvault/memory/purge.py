"""Purge: a text that should never have been kept, replaced everywhere memvault holds it.

Everywhere is the vault's memvault folders (the board, snapshots and their archive, the
fragments), the hook's spool and the server's logs under ``MEMVAULT_HOME``, and every text
column of the store (events, observations, summaries, the board's mirror, documents with
their lexical rows, graph names, queued jobs and kept LLM answers; see
``store.contract.purge``). Each match becomes ``[REDACTED:purged]``. A dry run lists the
places and counts and changes nothing. A purge that replaced something is recorded in the
store's audit (when, how many), never the text.

The files go first, then the store, with the index's passes held: the board mirror and
the index read the files, so the store is never filled again from a file not yet purged.
memvault keeps no exports of its own (``memvault export`` writes where it is told), so
there are none to purge here; an export written before a purge still holds the text.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from memvault.config import Settings
from memvault.errors import InvalidInput, MemvaultError
from memvault.hook.paths import spool_folder
from memvault.memory.index import Index
from memvault.memory.owner import VaultWrites
from memvault.store import Store
from memvault.store.contract.purge import MARKER, Place, PurgeRecord, scrub
from memvault.vault.files import memory_lock, write_atomic

MIN_TEXT = 4  # characters: a shorter text matches ordinary words everywhere
TEXT_LIMIT = 1000
FILE_SUFFIXES = (".md", ".json", ".log")
FILE_MARKER = "redacted-purged"  # in a file's name: brackets and colons are not portable
MARKERS = (MARKER, FILE_MARKER, "[REDACTED:secret]", "[REDACTED:memvaultignore]")


@dataclass(frozen=True, slots=True)
class PurgeReport:
    """What a purge found (``dry_run``: would replace) and, when it replaced something,
    its record in the audit."""

    dry_run: bool
    places: list[Place]
    record: PurgeRecord | None = None

    @property
    def rows(self) -> int:
        return sum(p.rows for p in self.places)

    @property
    def matches(self) -> int:
        return sum(p.matches for p in self.places)


@dataclass(frozen=True, slots=True)
class PurgeAudit:
    """How many purges were done, and the latest ones, newest first."""

    count: int
    latest: list[PurgeRecord]


def pattern_of(text: str, *, regex: bool = False) -> re.Pattern[str]:
    """The pattern a purge looks for; ``InvalidInput`` naming what is wrong with it."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("the text to purge is empty", fields=["text"])
    if len(text) > TEXT_LIMIT:
        raise InvalidInput(f"the text to purge is over {TEXT_LIMIT} characters", fields=["text"])
    if not regex and len(text) < MIN_TEXT:
        raise InvalidInput(
            f"the text to purge is shorter than {MIN_TEXT} characters: it would match "
            "ordinary words everywhere",
            fields=["text"],
        )
    try:
        pattern = re.compile(text if regex else re.escape(text), re.IGNORECASE)
    except re.error as exc:
        raise InvalidInput(
            f"the pattern is not a regular expression: {exc}", fields=["text"]
        ) from None
    if pattern.fullmatch("") is not None or pattern.search("    ") is not None:
        raise InvalidInput(
            "the pattern matches empty or blank text: it would match everywhere",
            fields=["text"],
        )
    # A purge run twice must find nothing the second time: what it (or redaction) wrote
    # cannot be what it looks for.
    if any(pattern.search(marker) for marker in MARKERS):
        raise InvalidInput(
            f"the text to purge matches the marker it leaves ({MARKER}) or another "
            "redaction marker",
            fields=["text"],
        )
    return pattern


class Purges:
    """The purge use case, and its audit."""

    def __init__(self, settings: Settings, store: Store, index: Index, owner: VaultWrites):
        self.settings = settings
        self.store = store
        self.index = index
        self.owner = owner

    def purge(self, text: str, *, regex: bool = False, dry_run: bool = False) -> PurgeReport:
        """Replace ``text`` (a regular expression with ``regex``) everywhere memvault keeps
        it; with ``dry_run``, only say where and how often."""
        pattern = pattern_of(text, regex=regex)
        if not dry_run and not self.owner.is_owner():
            raise MemvaultError(
                "this replica does not write the vault: run the purge against the server "
                "that does (memvault status says which role a server has)"
            )
        with self.index.indexer.paused():
            places = self._files(pattern, dry_run=dry_run)
            places += self.store.purge_text(pattern, dry_run=dry_run)
        report = PurgeReport(dry_run, places)
        if dry_run or not places:
            return report
        record = self.store.record_purge(len(places), report.rows, report.matches)
        self.index.nudge()  # documents that lost their vectors are embedded again
        return PurgeReport(False, places, record)

    def audit(self) -> PurgeAudit:
        count, latest = self.store.purge_audit()
        return PurgeAudit(count, latest)

    def _files(self, pattern: re.Pattern[str], *, dry_run: bool) -> list[Place]:
        vault = self.settings.vault_path
        home = Path(self.settings.home)
        groups = [
            ("vault", vault, [vault / "memory", self.settings.fragments_path]),
            ("home", home, [Path(spool_folder(str(home))), home / "logs"]),
        ]
        places: list[Place] = []
        memory = vault / "memory"
        with memory_lock(memory):
            for label, root, folders in groups:
                for path in _files_under(folders):
                    found = _purge_file(path, pattern, dry_run=dry_run)
                    relative = path.relative_to(root)
                    renamed, in_name = _renamed(relative, pattern)
                    if in_name and not dry_run:
                        _rename(path, root / renamed)
                    if found or in_name:
                        where = f"{label}:{renamed.as_posix()}"
                        places.append(Place(where, 1, found + in_name))
        return places


def _files_under(folders: list[Path]) -> list[Path]:
    seen: dict[Path, None] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        for root, dirs, names in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".obsidian"))
            for name in sorted(names):
                if name.endswith(FILE_SUFFIXES) or ".log." in name:
                    seen[Path(root) / name] = None
    return list(seen)


def _renamed(relative: Path, pattern: re.Pattern[str]) -> tuple[Path, int]:
    """The path with the text taken out of its names (a fragment's file is named after
    its summary), and how many times it was there."""
    parts, count = [], 0
    for part in relative.parts:
        cleaned, found = pattern.subn(FILE_MARKER, part)
        parts.append(cleaned)
        count += found
    return Path(*parts), count


def _rename(path: Path, target: Path) -> None:
    while target.exists():
        target = target.with_name(f"{target.stem}-1{target.suffix}")
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(path, target)
    folder = path.parent
    while folder != target.parent and not any(folder.iterdir()):
        folder.rmdir()  # a folder named after the text, now empty
        folder = folder.parent


def _purge_file(path: Path, pattern: re.Pattern[str], *, dry_run: bool) -> int:
    """How many matches the file held; they are replaced unless ``dry_run``."""
    try:
        # Bytes that are not UTF-8 cannot hold a match of a text: they become U+FFFD only
        # in a file that is rewritten.
        with path.open("r", encoding="utf-8", errors="replace", newline="") as f:
            text = f.read()
    except OSError:
        return 0
    cleaned, count = scrub(text, pattern)
    if count and not dry_run:
        write_atomic(path, cleaned)
    return count
