"""`memvault install cursor`: hooks.json, mcp.json and the project rule."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from memvault.config import Settings
from memvault.install import Commands, cursor, rules
from memvault.install.files import BEGIN, END
from tests.install.support import fixture_events, read_json, registered, split_hook, tree

DOCUMENTED_AGENT_EVENTS = {
    "sessionStart", "sessionEnd", "preToolUse", "postToolUse", "postToolUseFailure",
    "subagentStart", "subagentStop", "beforeShellExecution", "afterShellExecution",
    "beforeMCPExecution", "afterMCPExecution", "beforeReadFile", "afterFileEdit",
    "beforeSubmitPrompt", "preCompact", "stop", "afterAgentResponse", "afterAgentThought",
}  # fmt: skip
# The agent events of Cursor's hooks docs of the 1.7 era (October 2025): every Cursor with
# hooks knows them. A build of January 2026 still rejected sessionStart as unknown.
KNOWN_SINCE_1_7 = {
    "beforeShellExecution", "afterShellExecution", "beforeMCPExecution", "afterMCPExecution",
    "beforeReadFile", "afterFileEdit", "beforeSubmitPrompt", "stop", "afterAgentResponse",
    "afterAgentThought",
}  # fmt: skip
# Cursor fires postToolUse and, for the same action with another id, one of these.
SAME_ACTION_AS_POST_TOOL_USE = {"afterShellExecution", "afterMCPExecution", "afterFileEdit"}
MODES = pytest.mark.parametrize("flags", [("--stable-events",), ()], ids=["stable", "default"])


def _hooks(home):
    return read_json(home / ".cursor" / "hooks.json")["hooks"]


@MODES
def test_one_agent_action_runs_the_hook_once_never_post_tool_use_and_its_after_hook(
    home, memvault, flags
):
    memvault("install", "cursor", *flags)
    events = registered(_hooks(home))
    if "postToolUse" in events:
        assert not events & SAME_ACTION_AS_POST_TOOL_USE
    else:
        assert events >= SAME_ACTION_AS_POST_TOOL_USE  # then they are how tools are seen
    assert set(cursor.REPLACED_BY_POST_TOOL_USE) == SAME_ACTION_AS_POST_TOOL_USE
    assert all(cursor.REPLACED_BY_POST_TOOL_USE.values())


def test_stable_events_are_only_those_every_cursor_build_since_1_7_knows(home, memvault):
    result = memvault("install", "cursor", "--stable-events")
    hooks = _hooks(home)
    assert set(hooks) == set(cursor.STABLE_EVENTS)
    assert set(hooks) <= KNOWN_SINCE_1_7
    assert "--all-events" in result.stdout


def test_by_default_the_newer_events_are_registered_and_tools_go_to_post_tool_use(home, memvault):
    memvault("install", "cursor")
    assert set(_hooks(home)) == {
        "sessionStart", "sessionEnd", "beforeSubmitPrompt", "postToolUse", "postToolUseFailure",
        "subagentStart", "subagentStop", "preCompact", "stop", "afterAgentResponse",
        "afterAgentThought",
    }  # fmt: skip


@MODES
def test_every_cursor_event_in_the_recorded_payloads_is_hooked_or_deliberately_left_out(
    home, memvault, flags
):
    memvault("install", "cursor", *flags)
    document = read_json(home / ".cursor" / "hooks.json")
    assert document["version"] == 1
    hooks = document["hooks"]
    left_out = set(cursor.NOT_REGISTERED) | set(cursor.NEWER_EVENTS)
    if not flags:
        left_out = set(cursor.NOT_REGISTERED) | set(cursor.REPLACED_BY_POST_TOOL_USE)
    missing = fixture_events("cursor") - set(hooks) - left_out
    assert not missing, f"recorded Cursor events with no memvault hook: {missing}"
    assert not set(hooks) & left_out
    assert set(hooks) <= DOCUMENTED_AGENT_EVENTS  # Cursor rejects a file with unknown keys
    for event, handlers in hooks.items():
        (handler,) = handlers
        _, program, host = split_hook(handler["command"])
        assert host == "cursor", event
        assert os.path.isabs(program) and program.endswith("memvault-hook"), handler
        assert handler["timeout"] == cursor.TIMEOUT_SECONDS


def test_going_to_stable_events_removes_only_memvaults_newer_events(home, memvault, tmp_path):
    (home / ".cursor").mkdir()
    mine = {"command": "./hooks/greet.sh"}
    (home / ".cursor" / "hooks.json").write_text(
        json.dumps({"version": 1, "hooks": {"sessionStart": [mine]}})
    )
    memvault("install", "cursor")
    assert registered(_hooks(home)) == set(cursor.events(all_events=True))
    memvault("install", "cursor", "--stable-events")
    hooks = _hooks(home)
    assert registered(hooks) == set(cursor.STABLE_EVENTS)
    assert hooks["sessionStart"] == [mine]  # the user's own hook stays
    assert set(hooks) == set(cursor.STABLE_EVENTS) | {"sessionStart"}  # no empty keys left
    first = tree(tmp_path)
    memvault("install", "cursor", "--stable-events")
    assert tree(tmp_path) == first


def test_the_events_of_an_older_install_are_cleaned_up_by_a_new_one(home, memvault):
    (home / ".cursor").mkdir()
    old = {"command": "/old/venv/bin/memvault-hook cursor", "timeout": 10}
    (home / ".cursor" / "hooks.json").write_text(
        json.dumps({"version": 1, "hooks": {e: [old] for e in DOCUMENTED_AGENT_EVENTS}})
    )
    memvault("install", "cursor")
    assert set(_hooks(home)) == set(cursor.events(all_events=True))


def test_the_mcp_server_runs_memvault_mcp_by_absolute_path(home, memvault):
    memvault("install", "cursor")
    server = read_json(home / ".cursor" / "mcp.json")["mcpServers"]["memvault"]
    assert server["args"] == ["mcp"]
    assert os.path.isabs(server["command"]) and server["command"].endswith(
        ("memvault", "memvault.exe")
    )


def test_user_scope_writes_no_rule_file_and_says_where_user_rules_go(home, memvault):
    result = memvault("install", "cursor")
    assert not (home / ".cursor" / "rules").exists()
    assert "--print-rules" in result.stdout and "--project" in result.stdout
    printed = memvault("install", "cursor", "--print-rules").stdout
    assert printed == rules.render(Settings().language)


def test_project_scope_writes_an_always_applied_rule_and_leaves_home_alone(
    home, memvault, tmp_path
):
    project = tmp_path / "demo-app"
    project.mkdir()
    memvault("install", "cursor", "--project", str(project))
    folder = project / ".cursor"
    assert {p.name for p in folder.iterdir()} == {"hooks.json", "mcp.json", "rules"}
    text = (folder / "rules" / "memvault.mdc").read_text("utf-8")
    assert text.startswith("---\n")
    frontmatter = yaml.safe_load(text.split("---\n")[1])
    assert frontmatter["alwaysApply"] is True
    assert isinstance(frontmatter["description"], str) and frontmatter["description"]
    body = text.split(BEGIN)[1].split(END)[0]
    assert body.strip() == rules.render(Settings().language).strip()
    assert tree(home) == {}


def test_the_users_hooks_servers_order_keys_and_indentation_are_kept(home, memvault):
    folder = home / ".cursor"
    folder.mkdir()
    theirs = {
        "version": 1,
        "hooks": {
            "stop": [{"command": ".cursor/hooks/audit.sh"}],
            "beforeShellExecution": [
                {"command": ".cursor/hooks/gh-guard.sh", "matcher": "(^|\\s)gh(\\s|$)"},
                {"command": ".cursor/hooks/audit.sh"},
            ],
        },
        "x-team-note": {"owner": "platform"},
    }
    (folder / "hooks.json").write_text(json.dumps(theirs, indent=4) + "\n")
    (folder / "mcp.json").write_text(
        json.dumps({"mcpServers": {"github": {"url": "https://example.test/mcp"}}}, indent="\t")
    )
    memvault("install", "cursor")

    text = (folder / "hooks.json").read_text("utf-8")
    assert '\n    "version": 1,' in text and text.endswith("}\n")
    merged = json.loads(text)
    assert list(merged) == ["version", "hooks", "x-team-note"]
    assert merged["x-team-note"] == {"owner": "platform"}
    hooks = merged["hooks"]
    assert list(hooks)[:2] == ["stop", "beforeShellExecution"]
    assert hooks["beforeShellExecution"] == theirs["hooks"]["beforeShellExecution"]
    assert hooks["stop"][0] == {"command": ".cursor/hooks/audit.sh"}
    assert len(hooks["stop"]) == 2

    servers_text = (folder / "mcp.json").read_text("utf-8")
    assert '\n\t"mcpServers": {' in servers_text and not servers_text.endswith("\n")
    assert list(json.loads(servers_text)["mcpServers"]) == ["github", "memvault"]


def test_a_second_install_changes_nothing_byte_for_byte(home, memvault, tmp_path):
    (home / ".cursor").mkdir()
    (home / ".cursor" / "hooks.json").write_text('{"version": 1, "hooks": {"stop": []}}')
    memvault("install", "cursor")
    first = tree(tmp_path)
    result = memvault("install", "cursor")
    assert tree(tmp_path) == first
    assert result.stdout.count("unchanged") == 2


def test_a_hook_left_by_an_older_install_is_replaced_where_it_was(home, memvault):
    (home / ".cursor").mkdir()
    stale = {"command": "/old/venv/bin/memvault-hook cursor"}
    mine = {"command": "./hooks/mine.sh"}
    (home / ".cursor" / "hooks.json").write_text(
        json.dumps({"version": 1, "hooks": {"stop": [stale, mine, stale]}})
    )
    memvault("install", "cursor")
    stop = read_json(home / ".cursor" / "hooks.json")["hooks"]["stop"]
    assert len(stop) == 2 and stop[1] == mine
    assert stop[0]["command"].endswith("memvault-hook cursor")
    assert not stop[0]["command"].startswith("/old/")


def test_files_already_holding_memvaults_entries_are_left_alone_whatever_their_layout(
    home, memvault
):
    commands = Commands.find(Settings())
    entry = {"command": commands.hook_command("cursor"), "timeout": cursor.TIMEOUT_SECONDS}
    hooks = json.dumps(
        {"version": 1, "hooks": {e: [entry] for e in cursor.events(all_events=True)}},
        separators=(",", ":"),
    )
    server = json.dumps(commands.mcp_server())
    servers = (
        f'{{ "mcpServers" : {{"a": {{"command": "a", "args": [1,2]}},\n "memvault": {server}}} }}'
    )
    (home / ".cursor").mkdir()
    (home / ".cursor" / "hooks.json").write_text(hooks)
    (home / ".cursor" / "mcp.json").write_text(servers)
    result = memvault("install", "cursor", "--json")
    assert (home / ".cursor" / "hooks.json").read_text() == hooks
    assert (home / ".cursor" / "mcp.json").read_text() == servers
    assert {f["action"] for f in json.loads(result.stdout)["files"]} == {"unchanged"}
