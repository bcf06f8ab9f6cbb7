"""`memvault install claude-code`: settings.json hooks, the MCP server, CLAUDE.md."""

from __future__ import annotations

import json
import os
import stat

from memvault.install import Commands, claude_code, rules
from memvault.install.files import BEGIN, END
from tests.install.support import fixture_events, hook_commands, read_json, tree

# The hook events the Claude Code builds of early 2026 accept; naming any other event makes
# those builds skip the whole settings.json.
ACCEPTED_SINCE_EARLY_2026 = {
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "Notification", "UserPromptSubmit",
    "SessionStart", "SessionEnd", "Stop", "SubagentStart", "SubagentStop", "PreCompact",
    "PermissionRequest",
}  # fmt: skip


def test_every_recorded_claude_code_event_is_registered_or_deliberately_left_out(home, memvault):
    memvault("install", "claude-code")
    registered = set(read_json(home / ".claude" / "settings.json")["hooks"])
    assert registered == set(claude_code.EVENTS)
    unaccounted = fixture_events("claude-code") - registered - set(claude_code.NOT_REGISTERED)
    assert not unaccounted, f"recorded Claude Code events neither hooked nor excused: {unaccounted}"
    assert not registered & set(claude_code.NOT_REGISTERED)
    assert all(reason for reason in claude_code.NOT_REGISTERED.values())


def test_no_event_is_registered_that_would_make_older_builds_skip_the_settings(home, memvault):
    memvault("install", "claude-code")
    assert set(read_json(home / ".claude" / "settings.json")["hooks"]) <= ACCEPTED_SINCE_EARLY_2026


def test_each_event_gets_one_group_running_the_hook_by_absolute_path(home, memvault):
    memvault("install", "claude-code")
    for event, groups in read_json(home / ".claude" / "settings.json")["hooks"].items():
        ((handler,),) = [g["hooks"] for g in groups]
        assert "matcher" not in groups[0], event  # every tool, every session source
        assert handler["type"] == "command"
        program, host = handler["command"].rsplit(" ", 1)
        assert host == "claude-code" and os.path.isabs(program), handler


def test_user_scope_registers_the_server_in_claude_json_and_keeps_everything_else(home, memvault):
    config = home / ".claude.json"
    state = {
        "numStartups": 41,
        "projects": {"/home/dev/code/demo-app": {"allowedTools": ["Bash(npm test)"]}},
        "mcpServers": {"github": {"type": "http", "url": "https://example.test/mcp"}},
    }
    config.write_text(json.dumps(state, indent=2))
    config.chmod(0o600)
    memvault("install", "claude-code")
    merged = read_json(config)
    assert merged["numStartups"] == 41 and merged["projects"] == state["projects"]
    assert list(merged["mcpServers"]) == ["github", "memvault"]
    assert merged["mcpServers"]["memvault"]["args"] == ["mcp"]
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    rules_text = (home / ".claude" / "CLAUDE.md").read_text("utf-8")
    assert rules_text.startswith(BEGIN) and rules_text.endswith(END + "\n")


def test_project_scope_writes_the_projects_files_and_leaves_home_alone(home, memvault, tmp_path):
    project = tmp_path / "demo-app"
    project.mkdir()
    memvault("install", "claude-code", "--project", str(project))
    assert set(read_json(project / ".claude" / "settings.json")["hooks"]) == set(claude_code.EVENTS)
    assert "memvault" in read_json(project / ".mcp.json")["mcpServers"]
    assert BEGIN in (project / "CLAUDE.md").read_text("utf-8")
    assert tree(home) == {}


def test_the_users_own_hooks_and_settings_are_kept_in_order(home, memvault):
    (home / ".claude").mkdir()
    theirs = {
        "model": "opus",
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        },
        "permissions": {"allow": ["Bash(ls:*)"]},
    }
    (home / ".claude" / "settings.json").write_text(json.dumps(theirs, indent=2) + "\n")
    memvault("install", "claude-code")
    merged = read_json(home / ".claude" / "settings.json")
    assert list(merged) == ["model", "hooks", "permissions"]
    assert merged["permissions"] == theirs["permissions"]
    hooks = merged["hooks"]
    assert list(hooks)[:2] == ["PreToolUse", "Stop"]
    assert hooks["PreToolUse"][0] == theirs["hooks"]["PreToolUse"][0]
    assert hooks["Stop"][0] == theirs["hooks"]["Stop"][0]
    assert len(hook_commands(hooks["PreToolUse"][1]["hooks"])) == 1


def test_rules_go_into_a_crlf_claude_md_after_the_users_text_in_crlf(home, memvault, tmp_path):
    (home / ".claude").mkdir()
    theirs = "# My preferences\r\n\r\n- Answer in English.\r\n"
    claude_md = home / ".claude" / "CLAUDE.md"
    claude_md.write_bytes(theirs.encode())
    memvault("install", "claude-code")
    text = claude_md.read_bytes().decode()
    assert text.startswith(theirs + "\r\n" + BEGIN + "\r\n")
    assert text.endswith(END + "\r\n")
    assert "\n" not in text.replace("\r\n", "")
    body = text.split(BEGIN)[1].split(END)[0].replace("\r\n", "\n")
    assert body.strip() == rules.render().strip()
    first = tree(tmp_path)
    memvault("install", "claude-code")
    assert tree(tmp_path) == first


def test_an_outdated_block_is_replaced_where_it_stands(home, memvault):
    project = home / "demo-app"
    project.mkdir()
    (project / "CLAUDE.md").write_text(
        f"# Project\n\n{BEGIN}\nold memvault rules\n{END}\n\n## Testing\n\nRun make test.\n"
    )
    memvault("install", "claude-code", "--project", str(project))
    text = (project / "CLAUDE.md").read_text("utf-8")
    assert "old memvault rules" not in text
    assert text.startswith(f"# Project\n\n{BEGIN}\n# memvault")
    assert text.endswith(f"{END}\n\n## Testing\n\nRun make test.\n")
    assert text.count(BEGIN) == 1


def test_a_second_install_changes_nothing_byte_for_byte(home, memvault, tmp_path):
    (home / ".claude.json").write_text('{"numStartups": 3}')
    memvault("install", "claude-code")
    first = tree(tmp_path)
    result = memvault("install", "claude-code")
    assert tree(tmp_path) == first
    assert result.stdout.count("unchanged") == 3


def test_settings_already_holding_memvaults_hooks_are_left_alone_whatever_their_layout(
    home, memvault
):
    handler = {
        "type": "command",
        "command": Commands.find().hook_command("claude-code"),
        "timeout": claude_code.TIMEOUT_SECONDS,
    }
    document = {"hooks": {event: [{"hooks": [handler]}] for event in claude_code.EVENTS}}
    layout = json.dumps(document, separators=(",", ":"))
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(layout)
    result = memvault("install", "claude-code", "--json")
    assert (home / ".claude" / "settings.json").read_text() == layout
    assert json.loads(result.stdout)["files"][0]["action"] == "unchanged"
