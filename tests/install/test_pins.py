"""The environment an install pins, for editors that do not see the shell's environment.

An editor started from the desktop gets no MEMVAULT_HOME or MEMVAULT_URL from the user's
shell: without pins its hooks spool into a folder the server never drains, and talk to a
server that is not the user's.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from memvault.config import Settings
from memvault.install import commands as commands_module
from memvault.install.commands import is_memvault_hook
from tests.install.support import read_json, split_hook, tree

URL = "http://127.0.0.1:4555"
HOSTS = pytest.mark.parametrize("host", ["cursor", "claude-code"])
LOCATIONS = (
    "MEMVAULT_HOME", "XDG_DATA_HOME", "MEMVAULT_URL", "AGENTMEMORY_URL", "MEMVAULT_HOST",
    "MEMVAULT_PORT", "III_REST_PORT", "MEMVAULT_VAULT",
)  # fmt: skip


def _hook_commands(home, host):
    if host == "cursor":
        hooks = read_json(home / ".cursor" / "hooks.json")["hooks"]
        return [h["command"] for handlers in hooks.values() for h in handlers]
    hooks = read_json(home / ".claude" / "settings.json")["hooks"]
    return [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]]


def _mcp_server(home, host):
    path = home / ".cursor" / "mcp.json" if host == "cursor" else home / ".claude.json"
    return read_json(path)["mcpServers"]["memvault"]


@HOSTS
def test_hooks_and_mcp_server_carry_the_home_and_url_of_the_installing_shell(
    home, memvault, monkeypatch, tmp_path, host
):
    monkeypatch.setenv("MEMVAULT_URL", URL + "/")
    memvault("install", host)
    wanted = {"MEMVAULT_HOME": str(tmp_path / "memvault"), "MEMVAULT_URL": URL}
    for command in _hook_commands(home, host):
        pinned, _, _ = split_hook(command)
        assert pinned == wanted
        assert is_memvault_hook(command)
    assert _mcp_server(home, host)["env"] == wanted


@HOSTS
def test_defaults_are_not_pinned(home, memvault, monkeypatch, host):
    for name in LOCATIONS:
        monkeypatch.delenv(name, raising=False)
    result = memvault("install", host)
    for command in _hook_commands(home, host):
        assert split_hook(command)[0] == {}
    assert "env" not in _mcp_server(home, host)
    assert "Pinned" not in result.stdout


def test_a_home_moved_by_xdg_data_home_a_relative_home_and_a_port_are_pinned(
    home, memvault, monkeypatch, tmp_path
):
    for name in LOCATIONS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("MEMVAULT_PORT", "4000")
    monkeypatch.setenv("MEMVAULT_VAULT", str(tmp_path / "Vault"))
    memvault("install", "claude-code")
    pinned, _, _ = split_hook(_hook_commands(home, "claude-code")[0])
    assert pinned == {
        "MEMVAULT_HOME": str(tmp_path / "xdg" / "memvault"),
        "MEMVAULT_URL": "http://127.0.0.1:4000",
    }  # the hook never reads the vault; the MCP server does
    assert _mcp_server(home, "claude-code")["env"]["MEMVAULT_VAULT"] == str(tmp_path / "Vault")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMVAULT_HOME", "state")
    memvault("install", "claude-code")
    pinned, _, _ = split_hook(_hook_commands(home, "claude-code")[0])
    assert pinned["MEMVAULT_HOME"] == str(tmp_path / "state")  # hooks run in other folders


@HOSTS
def test_installing_again_after_the_environment_changed_updates_the_pins(
    home, memvault, monkeypatch, tmp_path, host
):
    monkeypatch.setenv("MEMVAULT_URL", URL)
    memvault("install", host)
    monkeypatch.setenv("MEMVAULT_HOME", str(tmp_path / "elsewhere"))
    monkeypatch.delenv("MEMVAULT_URL")
    memvault("install", host)
    for command in _hook_commands(home, host):
        assert split_hook(command)[0] == {"MEMVAULT_HOME": str(tmp_path / "elsewhere")}
    assert _mcp_server(home, host)["env"] == {"MEMVAULT_HOME": str(tmp_path / "elsewhere")}
    first = tree(home)
    result = memvault("install", host)
    assert tree(home) == first
    assert "updated" not in result.stdout and "created" not in result.stdout


@HOSTS
def test_the_users_own_variables_in_memvaults_mcp_entry_are_kept(home, memvault, monkeypatch, host):
    monkeypatch.setenv("MEMVAULT_URL", URL)
    memvault("install", host)
    path = home / ".cursor" / "mcp.json" if host == "cursor" else home / ".claude.json"
    document = read_json(path)
    document["mcpServers"]["memvault"]["env"]["MEMVAULT_SECRET"] = "s3cret"
    path.write_text(json.dumps(document))
    monkeypatch.delenv("MEMVAULT_URL")
    memvault("install", host)
    env = _mcp_server(home, host)["env"]
    assert env["MEMVAULT_SECRET"] == "s3cret" and "MEMVAULT_URL" not in env


def test_cursor_hooks_json_has_no_double_slash_its_comment_stripping_would_cut(
    home, memvault, monkeypatch
):
    monkeypatch.setenv("MEMVAULT_URL", URL)
    memvault("install", "cursor", "--all-events")
    text = (home / ".cursor" / "hooks.json").read_text("utf-8")
    assert "//" not in text
    as_cursor_reads_it = re.sub(r"//.*$", "", text, flags=re.MULTILINE)
    assert json.loads(as_cursor_reads_it) == json.loads(text)
    assert URL in json.loads(text)["hooks"]["stop"][0]["command"]


@pytest.mark.skipif(os.name == "nt", reason="runs the command through /bin/sh")
@HOSTS
def test_the_installed_command_reaches_the_pinned_server_and_spools_into_the_pinned_home(
    home, memvault, monkeypatch, tmp_path, host
):
    seen = []

    class Observe(BaseHTTPRequestHandler):
        def do_POST(self):
            seen.append((self.path, self.rfile.read(int(self.headers["Content-Length"]))))
            body = b'{"ok": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Observe)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("MEMVAULT_URL", f"http://127.0.0.1:{server.server_port}")
        memvault("install", host)
        _run_stop_hook(home, host, tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert "/agentmemory/observe" in [path for path, _ in seen]

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    monkeypatch.setenv("MEMVAULT_URL", f"http://127.0.0.1:{closed}")
    memvault("install", host)
    _run_stop_hook(home, host, tmp_path)
    spooled = list((tmp_path / "memvault" / "spool").rglob("*.json"))
    assert len(spooled) == 1  # where the server drains it, not in the editor's default


def _run_stop_hook(home, host, tmp_path):
    if host == "cursor":
        command = read_json(home / ".cursor" / "hooks.json")["hooks"]["stop"][0]["command"]
        payload = {
            "conversation_id": "c1", "generation_id": "g1", "hook_event_name": "stop",
            "status": "completed", "loop_count": 0, "cursor_version": "3.1.10",
            "workspace_roots": [str(tmp_path)],
        }  # fmt: skip
    else:
        groups = read_json(home / ".claude" / "settings.json")["hooks"]["Stop"]
        command = groups[0]["hooks"][0]["command"]
        payload = {
            "session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "Stop",
            "stop_hook_active": False, "last_assistant_message": "Done.",
        }  # fmt: skip
    desktop = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "desktop-home")}  # no MEMVAULT_*
    subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload).encode(),
        env=desktop,
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
        check=True,
    )


def test_on_windows_the_hook_command_stays_plain_and_the_report_says_what_to_do(
    home, memvault, monkeypatch
):
    monkeypatch.setattr(commands_module, "POSIX_SHELL", False)
    monkeypatch.setenv("MEMVAULT_URL", URL)
    result = memvault("install", "claude-code", "--dry-run")
    assert "setx" in result.stdout and "MEMVAULT_HOME and MEMVAULT_URL" in result.stdout
    found = commands_module.Commands.find(Settings())
    assert "=" not in found.hook_command("claude-code")
    assert found.mcp_server()["env"]["MEMVAULT_URL"] == URL  # the MCP env key works anywhere


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("MEMVAULT_HOME=/srv/mv /venv/bin/memvault-hook cursor", True),
        ("MEMVAULT_HOME='/a b' MEMVAULT_URL=http://h:1 '/x y/memvault-hook' claude-code", True),
        ("/venv/bin/memvault-hook cursor", True),
        ("FOO=memvault-hook ./audit.sh", False),
        ("echo memvault-hook", False),
    ],
)
def test_memvaults_hook_is_recognised_behind_variable_assignments(command, ours):
    assert is_memvault_hook(command) is ours
