"""Cursor's local history, found on disk: agent transcripts under
``~/.cursor/projects/<slug>/`` and the IDE's ``state.vscdb`` files, and the folder each
conversation ran in (from Cursor's workspace records, or the folder a slug spells).

A conversation found in ``state.vscdb`` is read from there (:mod:`.cursor_state`) and its
transcript is skipped: the database has times, tool results and ids that the transcript
lacks. Transcript files are read by :mod:`.cursor_transcripts`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from platformdirs import user_config_dir

from memvault.importers import cursor_state
from memvault.importers.cursor_state import folder_of_uri
from memvault.importers.cursor_transcripts import read_jsonl, read_legacy, session_of
from memvault.importers.driver import Step, Transcript, find_files

# How many folders a slug may cost to resolve on disk before giving up.
_LOOKUPS = 64


def user_dir() -> Path:
    """Cursor's per-user data folder (``…/Cursor/User``) in this OS's standard place."""
    return Path(user_config_dir("Cursor", appauthor=False, roaming=True)) / "User"


def default_paths() -> list[Path]:
    return [Path.home() / ".cursor" / "projects", user_dir()]


# -- what to read ------------------------------------------------------------------------


@dataclass(slots=True)
class Sources:
    transcripts: list[Path] = field(default_factory=list)
    databases: list[Path] = field(default_factory=list)


def discover(paths: list[Path]) -> Sources:
    """Agent transcripts and ``state.vscdb`` files under ``paths`` (folders or files)."""
    found = Sources()
    for path in paths:
        if path.is_file():
            files = [path] if _is_source(path, given=True) else []
        elif (path / "globalStorage").is_dir() or (path / "workspaceStorage").is_dir():
            files = _databases_in(path)  # Cursor's user folder: its History is not ours
        else:
            files = find_files(path, _is_source).files
        for file in files:
            bucket = found.databases if file.suffix == ".vscdb" else found.transcripts
            if file not in bucket:
                bucket.append(file)
    return found


def _databases_in(user: Path) -> list[Path]:
    candidates = [user / "globalStorage" / "state.vscdb"]
    if (user / "workspaceStorage").is_dir():
        candidates += sorted((user / "workspaceStorage").glob("*/state.vscdb"))
    return [path for path in candidates if path.is_file() and not path.is_symlink()]


def _is_source(path: Path, *, given: bool = False) -> bool:
    if path.name == "state.vscdb" or (given and path.suffix == ".vscdb"):
        return True
    return path.suffix in (".jsonl", ".txt") and (given or "agent-transcripts" in path.parts)


class Folders:
    """Where conversations ran: the workspace folders Cursor recorded, by transcript slug
    and by conversation, and as a last resort the folder on disk a slug spells."""

    def __init__(self) -> None:
        self.by_slug: dict[str, str] = {}
        self.by_composer: dict[str, str] = {}

    def learn(self, workspace_storage: Path) -> None:
        """Read every ``workspaceStorage/<hash>/workspace.json`` (and its database)."""
        if not workspace_storage.is_dir():
            return
        for workspace in sorted(workspace_storage.iterdir()):
            self.learn_workspace(workspace)

    def learn_workspace(self, workspace: Path) -> None:
        try:
            described = orjson.loads((workspace / "workspace.json").read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return
        uri = described.get("folder") if isinstance(described, dict) else None
        folder = folder_of_uri(uri) if isinstance(uri, str) else None
        if folder is None:
            return
        self.by_slug.setdefault(slug(folder), folder)
        database = workspace / "state.vscdb"
        if database.is_file():
            for composer in cursor_state.workspace_composers(database):
                self.by_composer.setdefault(composer, folder)

    def for_composer(self, composer_id: str) -> str | None:
        return self.by_composer.get(composer_id)

    def for_slug(self, name: str) -> str | None:
        key = slug(name)
        if key not in self.by_slug:
            found = _spelled_on_disk(key)
            if found is None:
                return None
            self.by_slug[key] = found
        return self.by_slug[key]


def slug(folder: str) -> str:
    """A folder as Cursor names its project folder: ``/Users/me/my-app`` → ``Users-me-my-app``."""
    return re.sub(r"[^A-Za-z0-9]+", "-", folder).strip("-")


def _spelled_on_disk(key: str) -> str | None:
    """The existing folder whose path the slug spells, if one does (``-`` is ambiguous:
    ``a-b`` may be ``/a/b`` or ``/a-b``; each choice is tried against the disk)."""
    if sys.platform == "win32" or not key:
        return None
    parts = key.split("-")
    budget = [_LOOKUPS]

    def search(folder: str, index: int) -> str | None:
        if index == len(parts):
            return folder
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        try:
            names = sorted(e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False))
        except OSError:
            return None
        for name in names:
            words = slug(name).split("-")
            if words and parts[index : index + len(words)] == words:
                found = search(os.path.join(folder, name), index + len(words))
                if found is not None:
                    return found
        return None

    return search("/", 0)


def transcripts(paths: list[Path], *, project: str | None = None) -> list[Transcript]:
    """Everything to import from ``paths``: state databases' conversations, then the
    agent transcripts of conversations the databases do not hold."""
    sources = discover(paths)
    folders = Folders()
    folders.learn(user_dir() / "workspaceStorage")
    for database in sources.databases:
        folders.learn_workspace(database.parent)
    found: list[Transcript] = []
    in_databases: set[str] = set()
    for database in sources.databases:
        for composer in cursor_state.composer_ids(database):
            in_databases.add(composer)
            found.append(
                cursor_state.conversation(
                    database, composer, folder_for=folders.for_composer, project=project
                )
            )
    for path in sources.transcripts:
        if session_of(path) in in_databases and path.parent.name != "subagents":
            found.append(Transcript(str(path), _read_from_database))
        else:
            found.append(transcript(path, folders=folders, project=project))
    return found


def _read_from_database() -> Iterator[Step]:
    yield Step(0, skipped="transcript of a conversation read from state.vscdb", lines=0)


def transcript(
    path: Path, *, folders: Folders | None = None, project: str | None = None
) -> Transcript:
    """One agent transcript file (``.jsonl`` or legacy ``.txt``)."""
    folder = _folder_of(path, folders or Folders())

    def read() -> Iterator[Step]:
        if path.suffix == ".txt":
            return read_legacy(path, folder=folder, project=project)
        return read_jsonl(path, folder=folder, project=project)

    return Transcript(str(path), read)


def _folder_of(path: Path, folders: Folders) -> str:
    """The project folder, from ``projects/<slug>/agent-transcripts/…``."""
    parts = path.parts
    if "agent-transcripts" in parts:
        name = parts[parts.index("agent-transcripts") - 1]
        return folders.for_slug(name) or name
    return path.parent.name
