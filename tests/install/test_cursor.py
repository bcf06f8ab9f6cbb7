"""`memvault install cursor`: hooks.json, mcp.json and the project rule."""

from __future__ import annotations

import json
import os

import yaml

from memvault.install import Commands, cursor, rules
from memvault.install.files import BEGIN, END
from tests.install.support import fixture_events, read_json, tree

DOCUMENTED_AGENT_EVENTS = {
    "sessionStart", "sessionEnd", "preToolUse", "postToolUse", "postToolUseFailure",
    "subagentStart", "subagentStop", "beforeShellExecution", "afterShellExecution",
    "beforeMCPExecution", "afterMCPExecution", "beforeReadFile", "afterFileEdit",
    "beforeSubmitPrompt", "preCompact", "stop", "afterAgentResponse", "afterAgentThought",
}  # fmt: skip


def test_every_cursor_event_in_the_recorded_payloads_runs_the_hook(home, memvault):
    memvault("install", "cursor")
    document = read_json(home / ".cursor" / "hooks.json")
    assert document["version"] == 1
    hooks = document["hooks"]
    missing = fixture_events("cursor") - set(hooks) - set(cursor.NOT_REGISTERED)
    assert not missing, f"recorded Cursor events with no memvault hook: {missing}"
    assert not set(hooks) & set(cursor.NOT_REGISTERED)
    for event, handlers in hooks.items():
        (handler,) = handlers
        program, host = handler["command"].rsplit(" ", 1)
        assert host == "cursor", event
        assert os.path.isabs(program) and program.endswith("memvault-hook"), handler
        assert handler["timeout"] == cursor.TIMEOUT_SECONDS


def test_only_documented_events_are_written_because_cursor_rejects_unknown_keys(home, memvault):
    memvault("install", "cursor")
    assert set(read_json(home / ".cursor" / "hooks.json")["hooks"]) <= DOCUMENTED_AGENT_EVENTS


def test_the_mcp_server_runs_memvault_mcp_by_absolute_path(home, memvault):
    memvault("install", "cursor")
    server = read_json(home / ".cursor" / "mcp.json")["mcpServers"]["memvault"]
    assert server["args"] == ["mcp"]
    assert os.path.isabs(server["command"]) and server["command"].endswith("memvault")


def test_user_scope_writes_no_rule_file_and_says_where_user_rules_go(home, memvault):
    result = memvault("install", "cursor")
    assert not (home / ".cursor" / "rules").exists()
    assert "--print-rules" in result.stdout and "--project" in result.stdout
    printed = memvault("install", "cursor", "--print-rules").stdout
    assert printed == rules.render()


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
    assert body.strip() == rules.render().strip()
    assert tree(home) == {}


def test_the_users_hooks_servers_order_keys_and_indentation_are_kept(home, memvault):
    folder = home / ".cursor"
    folder.mkdir()
    theirs = {
        "version": 1,
        "hooks": {
            "sessionEnd": [{"command": ".cursor/hooks/audit.sh"}],
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
    assert list(hooks)[:2] == ["sessionEnd", "beforeShellExecution"]
    assert hooks["beforeShellExecution"] == theirs["hooks"]["beforeShellExecution"]
    assert hooks["sessionEnd"][0] == {"command": ".cursor/hooks/audit.sh"}
    assert len(hooks["sessionEnd"]) == 2

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
    commands = Commands.find()
    entry = {"command": commands.hook_command("cursor"), "timeout": cursor.TIMEOUT_SECONDS}
    hooks = json.dumps(
        {"version": 1, "hooks": {event: [entry] for event in cursor.EVENTS}}, separators=(",", ":")
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
