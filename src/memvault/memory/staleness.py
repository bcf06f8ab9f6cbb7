"""What no longer holds in memory: memories marked retired, and files a memory cites that
are gone from the project's folder.

A fragment a newer one superseded, or a memory marked ``[resolved]`` or ``[done]``, is
history, never given to an agent as current (``current``); a search still finds it, its
mark in its summary. A fragment or board row that names files of the project (its
``files:`` facts, its snapshot's Files / Artifacts) is checked against the folder the
asking session works in, when this machine can see it: files that are gone are named in
the block (``(files gone: src/old.ts)``) and the memory ranks after the ones whose files
are there (``FileCheck.weigh``). Checking costs one ``stat`` per file, cached for a
minute, and stops at a small time bound, so a block on the hook's path never waits on a
slow disk: a file not checked in time counts as there. ``Staleness`` lists the fragments
every cited file of which is gone, for ``memvault doctor`` and the viewer.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from memvault.domain import Document, Session
from memvault.search.engine import Hit
from memvault.store import Store
from memvault.vault.fragments import retired_mark
from memvault.vault.remember import fact_text, is_fact_line
from memvault.vault.snapshot import FILES

CACHE_SECONDS = 60.0  # how long a stat's answer is trusted
CHECK_SECONDS = 0.02  # the most one block spends on stat calls
CACHE_LIMIT = 20_000  # answers kept before the oldest half goes
STALE_FACTOR = 0.5  # what is left of a score when a memory's files are gone
SHOWN_GONE = 3  # files named in the mark, the rest counted
GONE_LISTED = 200  # fragments whose files are all gone, listed at most
SESSIONS_SCANNED = 1000  # the latest sessions read for the projects' folders
_FILE_FACT = re.compile(r"^(?:files?|文件|檔案)\s*[:：]\s*(?P<files>.+)$", re.IGNORECASE)
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*$")
# What a cited file looks like: no spaces, no URL, a name with an extension or a folder.
_PATH = re.compile(r"^[^\s:*?\"<>|]+$")


def current(hits: list[Hit]) -> list[Hit]:
    """The hits that still hold: not superseded, resolved or done."""
    return [hit for hit in hits if retired_mark(hit.document.summary) is None]


def cited_files(document: Document) -> list[str]:
    """The files a memory names: a fragment's ``files:``/``file:`` facts, a board row's
    snapshot Files / Artifacts items; each once, in order."""
    found: list[str] = []
    section = None
    for line in document.body.split("\n"):
        heading = _HEADING.match(line.strip())
        if heading:
            section = heading["title"]
            continue
        if not is_fact_line(line):
            continue
        fact = fact_text(line).strip("`")
        if section == FILES:
            found += _paths([fact])
            continue
        named = _FILE_FACT.match(fact)
        if named:
            found += _paths(named["files"].split(","))
    return list(dict.fromkeys(found))


def _paths(items: Iterable[str]) -> list[str]:
    paths = []
    for item in items:
        path = item.strip().strip("`'\"").split(" (")[0].strip()
        if path and _PATH.match(path) and ("/" in path or "." in path.lstrip(".")):
            paths.append(path)
    return paths


def project_folder(session: Session | None) -> Path | None:
    """The folder the asking session works in, when this machine sees it as a folder."""
    if session is None or not session.cwd or not os.path.isabs(session.cwd):
        return None
    folder = Path(session.cwd)
    return folder if folder.is_dir() else None


class FileCheck:
    """Which cited files are gone from a project's folder: one ``stat`` per file, its
    answer kept for ``CACHE_SECONDS``, at most ``CHECK_SECONDS`` spent per call."""

    def __init__(self, ttl: float = CACHE_SECONDS, bound: float = CHECK_SECONDS) -> None:
        self.ttl = ttl
        self.bound = bound
        self._seen: dict[str, tuple[float, bool]] = {}
        self._lock = threading.Lock()

    def gone(self, folder: Path, files: list[str], *, deadline: float | None = None) -> list[str]:
        """The files of ``files`` that are not in ``folder`` (relative ones taken from it,
        absolute ones only inside it); a file not checked by ``deadline`` counts as there."""
        missing = []
        for name in files:
            path = _inside(folder, name)
            if path is None:
                continue
            exists = self._exists(path, deadline)
            if exists is False:
                missing.append(name)
        return missing

    def _exists(self, path: str, deadline: float | None) -> bool | None:
        now = time.monotonic()
        with self._lock:
            cached = self._seen.get(path)
        if cached is not None and now - cached[0] < self.ttl:
            return cached[1]
        if deadline is not None and now > deadline:
            return None
        exists = os.path.lexists(path)
        with self._lock:
            if len(self._seen) >= CACHE_LIMIT:
                for key in list(self._seen)[: CACHE_LIMIT // 2]:
                    del self._seen[key]
            self._seen[path] = (now, exists)
        return exists

    def weigh(self, hits: list[Hit], folder: Path | None, project: str | None) -> list[Hit]:
        """``hits`` with the gone files of each named in its summary and its score cut,
        those after the ones whose files are there (the order otherwise kept). Only
        memories of ``project`` are checked: another project's paths are not this folder's."""
        if folder is None or not hits:
            return hits
        deadline = time.monotonic() + self.bound
        fresh, stale = [], []
        for hit in hits:
            document = hit.document
            if project and document.project not in (None, project):
                fresh.append(hit)
                continue
            missing = self.gone(folder, cited_files(document), deadline=deadline)
            if not missing:
                fresh.append(hit)
                continue
            marked = dataclasses.replace(
                document, summary=f"{document.summary} {gone_mark(missing)}".strip()
            )
            stale.append(dataclasses.replace(hit, document=marked, score=hit.score * STALE_FACTOR))
        return fresh + stale


def gone_mark(missing: list[str]) -> str:
    """``(files gone: a, b, c +2)``."""
    shown = ", ".join(missing[:SHOWN_GONE])
    more = f" +{len(missing) - SHOWN_GONE}" if len(missing) > SHOWN_GONE else ""
    return f"(files gone: {shown}{more})"


def _inside(folder: Path, name: str) -> str | None:
    """The path a cited file names in ``folder``; None for one outside it."""
    if os.path.isabs(name):
        path = os.path.normpath(name)
        root = os.path.normpath(folder)
        return path if path.startswith(root + os.sep) else None
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if ".." in parts:
        return None
    return os.path.join(folder, *parts)


@dataclass(frozen=True, slots=True)
class GoneFiles:
    """A fragment every file of which is gone from its project's folder."""

    id: str
    project: str
    summary: str
    folder: str
    files: tuple[str, ...]


@dataclass(eq=False)
class Staleness:
    """Fragments that cite only files no longer there: each project's folder is the one
    its latest session worked in, when this machine sees it."""

    store: Store
    fragments_dir: str
    check: FileCheck = field(default_factory=FileCheck)

    def gone_fragments(self, *, limit: int = GONE_LISTED) -> list[GoneFiles]:
        """Live fragments whose every cited file is gone, by project then id."""
        folders = self.project_folders()
        found: list[GoneFiles] = []
        offset = 0
        while batch := self.store.list_documents("fragment", limit=1000, offset=offset):
            offset += len(batch)
            for document in batch:
                folder = folders.get(document.project or "")
                cited = cited_files(document) if folder is not None else []
                if not cited or folder is None:
                    continue
                if len(self.check.gone(folder, cited)) == len(cited):
                    found.append(self._gone(document, folder, cited))
        found.sort(key=lambda gone: (gone.project, gone.id))
        return found[:limit]

    def project_folders(self) -> dict[str, Path]:
        """Each project's folder: the latest of its sessions' working folders that is a
        folder here."""
        folders: dict[str, Path] = {}
        for session in self.store.list_sessions(limit=SESSIONS_SCANNED):
            if session.project in folders or not session.cwd or not os.path.isabs(session.cwd):
                continue
            if os.path.isdir(session.cwd):
                folders[session.project] = Path(session.cwd)
        return folders

    def _gone(self, document: Document, folder: Path, cited: list[str]) -> GoneFiles:
        relative = PurePosixPath(document.key).relative_to(PurePosixPath(self.fragments_dir))
        return GoneFiles(
            relative.with_suffix("").as_posix(),
            document.project or "",
            document.summary,
            str(folder),
            tuple(cited),
        )
