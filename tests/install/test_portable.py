"""Project installs are files a team commits: bare command names, nothing of one machine;
a dry run shows the change itself; an uninstall leaves no empty ``mcpServers`` behind."""

from __future__ import annotations

import json

import pytest

HOSTS = {
    "claude-code": (".claude/settings.json", ".mcp.json"),
    "cursor": (".cursor/hooks.json", ".cursor/mcp.json"),
}


@pytest.mark.parametrize("host", HOSTS)
def test_a_project_install_names_the_commands_bare_and_pins_nothing_of_this_machine(
    home, memvault, tmp_path, monkeypatch, host
):
    monkeypatch.setenv("MEMVAULT_URL", "http://127.0.0.1:4999")  # would be pinned user-wide
    project = tmp_path / "demo-app"
    project.mkdir()
    result = memvault("install", host, "--project", str(project))
    hooks_file, mcp_file = HOSTS[host]
    hooks_text = (project / hooks_file).read_text("utf-8")
    mcp_text = (project / mcp_file).read_text("utf-8")
    for text in (hooks_text, mcp_text):
        assert str(tmp_path) not in text and "MEMVAULT_" not in text
    commands = [
        hook["command"]
        for entries in json.loads(hooks_text)["hooks"].values()
        for entry in entries
        for hook in (entry.get("hooks", [entry]))
    ]
    assert commands and all(c.startswith(f"memvault-hook {host}") for c in commands)
    server = json.loads(mcp_text)["mcpServers"]["memvault"]
    assert server["command"] == "memvault" and server["args"] == ["mcp"]
    assert "MEMVAULT_URL=http://127.0.0.1:4999" in result.output  # said, not written


def test_a_user_install_still_pins_what_a_desktop_editor_would_not_see(home, memvault, monkeypatch):
    monkeypatch.setenv("MEMVAULT_URL", "http://127.0.0.1:4999")
    memvault("install", "claude-code")
    settings = (home / ".claude" / "settings.json").read_text("utf-8")
    assert "MEMVAULT_URL=http://127.0.0.1:4999" in settings


def test_a_dry_run_shows_the_diff_it_would_write_and_writes_nothing(home, memvault, tmp_path):
    project = tmp_path / "demo-app"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text('{"model": "opus"}\n', "utf-8")
    result = memvault("install", "claude-code", "--project", str(project), "--dry-run")
    assert "would update" in result.output and "would create" in result.output
    assert "+++ " in result.output and '"model": "opus"' in result.output
    assert "memvault-hook claude-code" in result.output
    assert (project / ".claude" / "settings.json").read_text("utf-8") == '{"model": "opus"}\n'
    assert not (project / ".mcp.json").exists()
    report = json.loads(
        memvault("install", "claude-code", "--project", str(project), "--dry-run", "--json").output
    )
    assert all(f["diff"].startswith("---") for f in report["files"] if f["action"] != "unchanged")


def test_a_dry_run_uninstall_shows_what_it_would_take_out(home, memvault, tmp_path):
    project = tmp_path / "demo-app"
    project.mkdir()
    memvault("install", "claude-code", "--project", str(project))
    result = memvault(
        "install", "claude-code", "--project", str(project), "--uninstall", "--dry-run"
    )
    assert "would remove" in result.output and "-  " in result.output
    assert (project / ".mcp.json").exists()


def test_uninstalling_from_an_edited_mcp_file_leaves_no_empty_mcp_servers(home, memvault, tmp_path):
    project = tmp_path / "demo-app"
    project.mkdir()
    (project / ".mcp.json").write_text('{"note": "ours"}\n', "utf-8")
    memvault("install", "claude-code", "--project", str(project))
    edited = json.loads((project / ".mcp.json").read_text("utf-8"))
    edited["other"] = 1  # changed since install: memvault takes out only its own entry
    (project / ".mcp.json").write_text(json.dumps(edited), "utf-8")
    memvault("install", "claude-code", "--project", str(project), "--uninstall")
    assert json.loads((project / ".mcp.json").read_text("utf-8")) == {"note": "ours", "other": 1}
