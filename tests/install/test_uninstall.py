"""`--uninstall`: originals back byte for byte, or only memvault's part taken out."""

from __future__ import annotations

import json
import shutil

import pytest

from memvault.install.files import BEGIN
from tests.install.support import hook_commands, read_json, tree


def _lived_in_claude_home(home):
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        '{\n   "model": "opus",\n   "hooks": {"Stop": [{"hooks": [{"type": "command", '
        '"command": "notify-send done"}]}]}\n}'
    )
    (home / ".claude" / "CLAUDE.md").write_bytes(b"# Mine\r\n\r\nBe brief.\r\n")
    (home / ".claude.json").write_text('{"numStartups": 7, "mcpServers": {}}\n')
    (home / ".claude.json").chmod(0o600)


def _lived_in_cursor_project(project):
    (project / ".cursor" / "rules").mkdir(parents=True)
    (project / ".cursor" / "rules" / "style.mdc").write_text("---\nalwaysApply: true\n---\nx\n")
    (project / ".cursor" / "hooks.json").write_text(
        '{\n\t"version": 1,\n\t"hooks": {"afterFileEdit": [{"command": "fmt.sh"}]}\n}\n'
    )


@pytest.mark.parametrize("host", ["claude-code", "cursor"])
def test_uninstall_puts_back_the_users_home_byte_for_byte(home, memvault, host):
    _lived_in_claude_home(home)
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text('{"mcpServers": {"a": {"command": "a"}}}')
    before = tree(home)
    memvault("install", host)
    assert tree(home) != before
    result = memvault("install", host, "--uninstall")
    assert tree(home) == before
    assert "restored" in result.stdout


def test_uninstall_puts_back_a_project_and_removes_what_memvault_created(home, memvault, tmp_path):
    project = tmp_path / "demo-app"
    project.mkdir()
    _lived_in_cursor_project(project)
    before = tree(project)
    memvault("install", "cursor", "--project", str(project))
    memvault("install", "claude-code", "--project", str(project))
    assert (project / ".claude").is_dir() and (project / ".mcp.json").is_file()
    memvault("install", "cursor", "--project", str(project), "--uninstall")
    result = memvault("install", "claude-code", "--project", str(project), "--uninstall")
    assert tree(project) == before  # .claude/ and .mcp.json are gone again
    assert "removed" in result.stdout


def test_after_the_user_edits_uninstall_keeps_their_edit_and_removes_only_ours(home, memvault):
    _lived_in_claude_home(home)
    memvault("install", "claude-code")
    settings = home / ".claude" / "settings.json"
    edited = read_json(settings)
    edited["hooks"]["PreToolUse"].insert(
        0, {"matcher": "Edit", "hooks": [{"type": "command", "command": "lint.sh"}]}
    )
    settings.write_text(json.dumps(edited, indent=3))
    claude_md = home / ".claude" / "CLAUDE.md"
    claude_md.write_bytes(claude_md.read_bytes() + b"\r\n## Added later\r\n")

    result = memvault("install", "claude-code", "--uninstall", "--json")

    outcomes = {f["path"]: f for f in json.loads(result.stdout)["files"]}
    assert outcomes[str(settings)]["action"] == "stripped"
    assert "changed since install" in outcomes[str(settings)]["detail"]
    assert outcomes[str(home / ".claude.json")]["action"] == "restored"
    kept = read_json(settings)
    assert kept["model"] == "opus"
    assert kept["hooks"] == {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "lint.sh"}]}],
    }
    assert "memvault-hook" not in settings.read_text()
    assert claude_md.read_bytes() == b"# Mine\r\n\r\nBe brief.\r\n\r\n## Added later\r\n"


def test_an_edit_made_before_a_reinstall_survives_the_uninstall(home, memvault):
    memvault("install", "cursor")
    hooks_file = home / ".cursor" / "hooks.json"
    document = read_json(hooks_file)
    document["hooks"]["stop"] = [{"command": "/moved/bin/memvault-hook cursor"}]
    document["hooks"]["postToolUse"].append({"command": "./hooks/fmt.sh"})
    hooks_file.write_text(json.dumps(document))
    memvault("install", "cursor")  # rewrites the moved hook, so the file changes again
    memvault("install", "cursor", "--uninstall")
    assert read_json(hooks_file) == {
        "version": 1,
        "hooks": {"postToolUse": [{"command": "./hooks/fmt.sh"}]},
    }


def test_a_created_file_left_with_nothing_of_the_users_is_removed(home, memvault):
    memvault("install", "claude-code")
    claude_md = home / ".claude" / "CLAUDE.md"
    claude_md.write_text(claude_md.read_text() + "\n")  # touched, nothing added
    result = memvault("install", "claude-code", "--uninstall", "--json")
    assert tree(home) == {}
    assert {f["action"] for f in json.loads(result.stdout)["files"]} == {"removed"}


def test_without_an_install_record_memvaults_entries_are_still_removed(home, memvault, tmp_path):
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text('{"mcpServers": {"a": {"command": "a"}}}\n')
    memvault("install", "cursor")
    shutil.rmtree(tmp_path / "memvault" / "install")
    result = memvault("install", "cursor", "--uninstall")
    assert "no install record" in result.stdout
    assert read_json(home / ".cursor" / "mcp.json") == {"mcpServers": {"a": {"command": "a"}}}
    assert not hook_commands(
        [h for hs in read_json(home / ".cursor" / "hooks.json")["hooks"].values() for h in hs]
    )


def test_uninstall_with_nothing_installed_changes_nothing(home, memvault, tmp_path):
    _lived_in_claude_home(home)
    before = tree(tmp_path)
    result = memvault("install", "claude-code", "--uninstall")
    assert tree(tmp_path) == before
    assert result.stdout.count("unchanged") == 3


def test_the_install_record_is_gone_after_uninstall(home, memvault, tmp_path):
    memvault("install", "claude-code")
    assert any((tmp_path / "memvault" / "install").iterdir())
    memvault("install", "claude-code", "--uninstall")
    assert not any((tmp_path / "memvault" / "install").iterdir())
    assert BEGIN not in "".join(p.read_text() for p in home.rglob("*") if p.is_file())
