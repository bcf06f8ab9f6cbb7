"""`memvault install claude-code`: settings.json hooks, the MCP server, CLAUDE.md."""

from __future__ import annotations

import json
import os
import re
import stat

import pytest

from memvault.config import Settings
from memvault.install import Commands, claude_code, rules
from memvault.install.files import BEGIN, END
from tests.install.support import fixture_events, hook_commands, read_json, split_hook, tree

# The "classic nine" hook events, stable since 2025; naming any other event makes the builds
# that do not know it skip the whole settings.json.
CLASSIC_NINE = {
    "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop",
    "SubagentStop", "PreCompact", "SessionEnd",
}  # fmt: skip
MODES = pytest.mark.parametrize("flags", [(), ("--all-events",)], ids=["default", "all-events"])


def _hooks(home):
    return read_json(home / ".claude" / "settings.json")["hooks"]


@MODES
def test_every_recorded_claude_code_event_is_registered_or_deliberately_left_out(
    home, memvault, flags
):
    memvault("install", "claude-code", *flags)
    registered = set(_hooks(home))
    assert registered == set(claude_code.events(all_events=bool(flags)))
    left_out = set(claude_code.NOT_REGISTERED) | (set() if flags else set(claude_code.NEWER_EVENTS))
    unaccounted = fixture_events("claude-code") - registered - left_out
    assert not unaccounted, f"recorded Claude Code events neither hooked nor excused: {unaccounted}"
    assert not registered & left_out
    assert all(reason for reason in claude_code.NOT_REGISTERED.values())


def test_by_default_only_the_classic_nine_events_are_registered(home, memvault):
    result = memvault("install", "claude-code")
    assert set(_hooks(home)) == CLASSIC_NINE
    assert "--all-events" in result.stdout


def test_all_events_adds_tool_failures_and_subagent_starts(home, memvault):
    memvault("install", "claude-code", "--all-events")
    assert set(_hooks(home)) == CLASSIC_NINE | {"PostToolUseFailure", "SubagentStart"}
    memvault("install", "claude-code")  # and back: memvault's newer events go again
    assert set(_hooks(home)) == CLASSIC_NINE


@MODES
def test_each_event_gets_one_group_running_the_hook_by_absolute_path(home, memvault, flags):
    memvault("install", "claude-code", *flags)
    for event, groups in _hooks(home).items():
        ((handler,),) = [g["hooks"] for g in groups]
        if event == "PreToolUse":
            assert groups[0]["matcher"] == claude_code.FILE_TOOLS
        else:
            assert "matcher" not in groups[0], event  # every tool, every session source
        assert handler["type"] == "command"
        _, program, host = split_hook(handler["command"])
        assert host == "claude-code" and os.path.isabs(program), handler


def test_pre_tool_use_runs_the_hook_for_the_file_tools_only(home, memvault):
    memvault("install", "claude-code")
    (group,) = _hooks(home)["PreToolUse"]
    matcher = group["matcher"]
    # Letters and `|` only: Claude Code compares each name exactly (a regex in older builds).
    assert re.fullmatch(r"[A-Za-z]+(\|[A-Za-z]+)*", matcher)
    assert set(matcher.split("|")) == {"Edit", "Write", "MultiEdit", "NotebookEdit", "Read"}
    for tool in ("Bash", "Grep", "Glob", "WebFetch", "Agent", "mcp__memvault__memory_save"):
        assert tool not in matcher.split("|")


def test_an_older_pre_tool_use_group_without_matcher_gets_the_file_tools_matcher(home, memvault):
    (home / ".claude").mkdir()
    old = {"type": "command", "command": "/old/venv/bin/memvault-hook claude-code"}
    guard = {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"hooks": [old]}, guard]}})
    )
    memvault("install", "claude-code")
    groups = _hooks(home)["PreToolUse"]
    assert groups[1] == guard
    assert groups[0]["matcher"] == claude_code.FILE_TOOLS
    assert hook_commands(groups[0]["hooks"]) and len(groups[0]["hooks"]) == 1


def test_memvaults_handler_in_a_group_of_the_users_for_other_tools_moves_beside_it(home, memvault):
    (home / ".claude").mkdir()
    old = {"type": "command", "command": "/old/venv/bin/memvault-hook claude-code"}
    theirs = {"type": "command", "command": "guard.sh"}
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [theirs, old]}]}})
    )
    memvault("install", "claude-code")
    groups = _hooks(home)["PreToolUse"]
    assert groups[0] == {"matcher": "Bash", "hooks": [theirs]}
    assert groups[1]["matcher"] == claude_code.FILE_TOOLS and len(groups) == 2


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
    hooks = read_json(project / ".claude" / "settings.json")["hooks"]
    assert set(hooks) == set(claude_code.STABLE_EVENTS)
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
    assert body.strip() == rules.render(Settings().language).strip()
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
        "command": Commands.find(Settings()).hook_command("claude-code"),
        "timeout": claude_code.TIMEOUT_SECONDS,
    }
    document = {
        "hooks": {
            event: [{**_matcher(event), "hooks": [handler]}] for event in claude_code.STABLE_EVENTS
        }
    }
    layout = json.dumps(document, separators=(",", ":"))
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(layout)
    result = memvault("install", "claude-code", "--json")
    assert (home / ".claude" / "settings.json").read_text() == layout
    assert json.loads(result.stdout)["files"][0]["action"] == "unchanged"


def _matcher(event):
    return {"matcher": claude_code.MATCHERS[event]} if event in claude_code.MATCHERS else {}
