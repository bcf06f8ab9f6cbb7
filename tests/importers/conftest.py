"""Hosts' local history on a temporary home folder: the shared fixtures copied to where
Cursor and Claude Code keep them, and a memory to import them into."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memvault.domain import Event
from tests.helpers import fixtures_dir

CLAUDE_SPOTTER = "-home-marco-projects-spotter"
CLAUDE_WORKTREE = "-home-USER-projects-spotter-worktrees-spotter-dov"
COMPACTED_SESSION = "4d5611e5-241a-462a-8d15-5122611a9569"
CURSOR_SLUG = "Users-dev-code-demo-app"
CURSOR_JSONL = "0b9f3c2e-5d41-4a7e-9c3b-2f6d8e1a7b40"
CURSOR_TXT = "6e2d1f7a-3c9b-4b8e-a1d2-7f0c9e4b5a61"
COMPOSER = "98251e54-8aed-4515-b2b4-08895453eedd"
WORKSPACE = "3f1c9a7e2b5d4c8e9a0b1c2d3e4f5a6b"


@pytest.fixture
def fixtures() -> Path:
    return fixtures_dir()


@pytest.fixture
def home(tmp_path, fixtures, monkeypatch) -> Path:
    """A home folder holding every transcript fixture where its host writes it."""
    home = lay_out_home(tmp_path / "user", fixtures)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


def lay_out_home(home: Path, fixtures: Path) -> Path:
    claude = fixtures / "claude-code" / "transcripts"
    spotter = home / ".claude" / "projects" / CLAUDE_SPOTTER
    spotter.mkdir(parents=True)
    for name in ("short.jsonl", "tool_heavy.jsonl"):
        _copy(claude / name, spotter / name)
    worktree = home / ".claude" / "projects" / CLAUDE_WORKTREE
    worktree.mkdir(parents=True)
    _copy(claude / "compaction-excerpt.jsonl", worktree / f"{COMPACTED_SESSION}.jsonl")
    shutil.copytree(
        fixtures / "cursor" / "transcripts" / "projects",
        home / ".cursor" / "projects",
        copy_function=_copy,
    )
    shutil.copytree(
        fixtures / "cursor" / "state-vscdb" / "User",
        home / ".config" / "Cursor" / "User",
        copy_function=_copy,
        ignore=shutil.ignore_patterns("*.sql"),
    )
    return home


def _copy(source, target) -> None:
    """Copy a fixture writable, keeping its modification time (transcript times use it)."""
    shutil.copyfile(source, target)
    stat = os.stat(source)
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def stored(memory) -> list[tuple]:
    """Every stored event, comparable across imports."""
    return [
        (e.session_id, e.client_event_id, e.hook_type, e.occurred_at, e.project, e.cwd, e.payload)
        for session in memory.reads.sessions(limit=1000)
        for e in memory.reads.events(session.id, limit=10_000)
    ]


def events_of(memory, session_id: str) -> list[Event]:
    return memory.reads.events(session_id, limit=10_000)


def by_id(memory, session_id: str) -> dict[str, Event]:
    return {e.client_event_id: e for e in events_of(memory, session_id)}
