"""Files install creates that can hold a secret are the owner's alone; existing files keep
their mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def open_umask():
    # The usual desktop umask: without memvault's care a new file would be 0644.
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_claude_code_user_install_creates_its_json_files_0600(home, memvault):
    memvault("install", "claude-code")
    assert mode(home / ".claude.json") == 0o600
    assert mode(home / ".claude" / "settings.json") == 0o600
    assert mode(home / ".claude" / "CLAUDE.md") == 0o644  # rules: no secret in them


def test_cursor_user_install_creates_its_json_files_0600(home, memvault):
    memvault("install", "cursor")
    assert mode(home / ".cursor" / "mcp.json") == 0o600
    assert mode(home / ".cursor" / "hooks.json") == 0o600


def test_project_install_creates_its_mcp_json_0600(home, memvault, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    memvault("install", "claude-code", "--project", str(project))
    assert mode(project / ".mcp.json") == 0o600
    assert mode(project / ".claude" / "settings.json") == 0o600


def test_an_existing_file_keeps_its_mode(home, memvault):
    config = home / ".claude.json"
    config.write_text('{"theme": "dark"}\n')
    config.chmod(0o640)
    memvault("install", "claude-code")
    assert mode(config) == 0o640
    assert '"memvault"' in config.read_text()
