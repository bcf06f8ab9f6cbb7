"""What the installer refuses to do, and what it does not touch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memvault.install.files import BEGIN
from tests.install.support import read_json, tree


def test_malformed_json_is_refused_naming_file_and_position_with_nothing_written(
    home, memvault, tmp_path
):
    (home / ".cursor").mkdir()
    mcp = home / ".cursor" / "mcp.json"
    mcp.write_text('{\n  "mcpServers": {\n    "a": {"command": "a"},\n  }\n}\n')
    before = tree(tmp_path)
    result = memvault("install", "cursor", code=2)
    assert str(mcp) in result.stderr
    assert "line 4, column 3" in result.stderr
    assert tree(tmp_path) == before  # not even the hooks.json that was fine to create


def test_comments_in_hooks_json_are_refused_rather_than_dropped(home, memvault, tmp_path):
    (home / ".cursor").mkdir()
    (home / ".cursor" / "hooks.json").write_text(
        '{\n  // audit everything\n  "version": 1,\n  "hooks": {}\n}\n'
    )
    before = tree(tmp_path)
    result = memvault("install", "cursor", code=2)
    assert "hooks.json is not valid JSON" in result.stderr and "line 2" in result.stderr
    assert tree(tmp_path) == before


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ('{"hooks": []}', '"hooks"'),
        ('{"hooks": {"Stop": {"command": "x"}}}', '"hooks.Stop"'),
        ('["not", "an", "object"]', "not hold a JSON object"),
    ],
)
def test_wrongly_shaped_settings_are_refused(home, memvault, tmp_path, content, named):
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(content)
    before = tree(tmp_path)
    result = memvault("install", "claude-code", code=2)
    assert named in result.stderr
    assert tree(tmp_path) == before


def test_malformed_json_stops_an_uninstall_before_anything_is_restored(home, memvault, tmp_path):
    memvault("install", "claude-code")
    (home / ".claude.json").write_text('{"mcpServers": ')
    before = tree(tmp_path)
    result = memvault("install", "claude-code", "--uninstall", code=2)
    assert ".claude.json" in result.stderr
    assert tree(tmp_path) == before


def test_an_unclosed_memvault_block_is_refused(home, memvault, tmp_path):
    (home / ".claude").mkdir()
    (home / ".claude" / "CLAUDE.md").write_text(f"# Mine\n\n{BEGIN}\nhalf a block\n")
    before = tree(tmp_path)
    result = memvault("install", "claude-code", code=2)
    assert "line 3" in result.stderr and "memvault:end" in result.stderr
    assert tree(tmp_path) == before


@pytest.mark.parametrize("host", ["cursor", "claude-code"])
def test_dry_run_writes_nothing_and_says_what_it_would_do(home, memvault, tmp_path, host):
    before = tree(tmp_path)
    result = memvault("install", host, "--dry-run")
    assert tree(tmp_path) == before
    assert "would create" in result.stdout and "dry run" in result.stdout
    memvault("install", host)
    installed = tree(tmp_path)
    result = memvault("install", host, "--uninstall", "--dry-run")
    assert tree(tmp_path) == installed
    assert "would remove" in result.stdout


def test_a_symlinked_config_is_edited_where_it_points(home, memvault, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "settings.json"
    real.write_text('{"model": "opus"}\n')
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(real)
    memvault("install", "claude-code")
    assert (home / ".claude" / "settings.json").is_symlink()
    assert "hooks" in read_json(real)
    memvault("install", "claude-code", "--uninstall")
    assert real.read_text() == '{"model": "opus"}\n'


def test_the_installed_command_works_in_a_real_process(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "MEMVAULT_HOME": str(tmp_path / "memvault")}
    result = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "install", "claude-code", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["scope"] == "user" and report["changed"]
    assert {f["action"] for f in report["files"]} == {"created"}
    assert (home / ".claude" / "settings.json").is_file()
