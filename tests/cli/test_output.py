"""What the CLI prints reads as text: help with plain metavars, reports without Python
values, and tables that stay one row a line when piped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rich.cells import cell_len


def memvault(*args: str, home) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memvault.cli", *args],
        env={**os.environ, "MEMVAULT_HOME": str(home), "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


@pytest.mark.parametrize("command", [["save"], ["search"], ["session", "update"], ["--help"]])
def test_help_shows_plain_metavars_not_python_types(tmp_path, command):
    out = memvault(*[c for c in command if c != "--help"], "--help", home=tmp_path).stdout
    for python_type in ("<bool>", "<str>", "<list[", "<FileText>", "<int", "<float", "{"):
        assert python_type not in out, f"{python_type} in help of {command}"


def test_session_list_piped_prints_one_row_a_line_in_aligned_columns(tmp_path):
    summary = "Replacing the implicit flow with PKCE in the login page of the web app"
    memvault(
        "session", "register", "--manual", "--topic", "auth", "--summary", summary, home=tmp_path
    )
    memvault(
        "session", "register", "--manual", "--topic", "登入流程", "--summary", "第二", home=tmp_path
    )
    lines = memvault("session", "list", home=tmp_path).stdout.splitlines()
    assert len(lines) == 3  # the header and two rows
    assert lines[0].split()[:3] == ["Session", "ID", "Status"]
    # Registered in the same minute, the two rows may come in either order.
    (english,) = [line for line in lines[1:] if "  auth  " in line]
    (chinese,) = [line for line in lines[1:] if "登入流程" in line]
    assert "  active  auth  " in english and summary in english
    # Every column starts at the same place on every line (a CJK character is two wide).
    for column in ("Status", "Topic", "Summary", "Updated At"):
        at = lines[0].index(column)
        widths = [
            cell_len(line[: cell_start(line, value)])
            for line, value in zip((english, chinese), row(column), strict=True)
        ]
        assert widths == [at, at], column


def row(column: str) -> tuple[str, str]:
    return {
        "Status": ("active", "active"),
        "Topic": ("auth", "登入流程"),
        "Summary": ("Replacing", "第二"),
        "Updated At": (UPDATED_AT, UPDATED_AT),
    }[column]


# The last cell: a time (the session id holds a date too, and the time itself a "20" at
# 20 past the hour, which finding "20" took for the cell's start).
UPDATED_AT = r"\d{4}-\d\d-\d\d \d\d:\d\d\s*$"


def cell_start(line: str, value: str) -> int:
    if value == UPDATED_AT:
        return re.search(UPDATED_AT, line).start()
    return line.rindex(value)


def test_reports_print_words_not_python_values(tmp_path):
    memvault("session", "register", "--manual", home=tmp_path)
    out = memvault("organize", "--dry-run", home=tmp_path).stdout
    assert "kept active: 20" in out
    memvault("session", "register", home=tmp_path)  # idle: organize would delete it
    out = memvault("organize", "--dry-run", home=tmp_path).stdout
    assert "  would delete: 20" in out and "  deleted:" not in out
    assert "['" not in out and "True" not in out and "keptActive" not in out


def test_commands_are_grouped_in_the_order_people_reach_for_them(tmp_path):
    out = memvault("--help", home=tmp_path).stdout
    panels = ["The server", "Remember and find", "The session board", "Keep memory tidy"]
    positions = [out.index(panel) for panel in [*panels, "Editors and hosts"]]
    assert positions == sorted(positions)
    assert out.index(" serve ") < out.index(" search ") < out.index(" rebuild ")
    assert "--install-completion" in out  # shell completion is on offer


def test_the_command_list_gives_each_command_one_line(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "--help"],
        env={**os.environ, "MEMVAULT_HOME": str(tmp_path), "COLUMNS": "400"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    doctor = next(line for line in out.splitlines() if line.startswith("│ doctor "))
    assert "each editor's hooks and MCP entry, and versions" in doctor
    assert not [line for line in out.splitlines() if line.startswith("│            ")]


def test_piped_doctor_keeps_each_finding_on_one_line(tmp_path):
    dead = "http://127.0.0.1:9"
    result = subprocess.run(
        [sys.executable, "-m", "memvault.cli", "doctor"],
        env={**os.environ, "MEMVAULT_HOME": str(tmp_path), "MEMVAULT_URL": dead},
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = result.stdout.splitlines()
    server = next(line for line in lines if line.startswith("problem  server"))
    assert server.endswith(")") and dead in server
    names = [line.split()[1] for line in lines if line.split()[:1] in (["ok"], ["warn"])]
    columns = {line.index(line.split()[2]) for line in lines if line.split()[1:2] == ["store"]}
    assert names and len(columns) == 1


def test_search_piped_shows_whole_ids_and_get_prints_each_text_once(tmp_path):
    from memvault import Memory
    from tests.helpers import envelope

    summary = "Use PKCE for the login flow of the single page app, never the implicit flow"
    memvault(
        "save", "--project", "demo-app", "--summary", summary, "--fact", "flow: pkce", home=tmp_path
    )
    with Memory.open(home=tmp_path) as memory:
        observed = memory.observe(envelope("s1", 7)).observation_id
    out = memvault("search", "PKCE implicit", home=tmp_path).stdout
    (fragment_id,) = [f.stem for f in (tmp_path / "vault" / "agent-memory").rglob("*.md")]
    assert fragment_id in out and "…" not in out
    shown = memvault("get", observed, home=tmp_path).stdout
    narrative = '{"command":"npm test -- case7"} | 7 passed'
    assert shown.count(narrative) == 1 and shown.count("Bash: npm test -- case7") == 1


def test_an_empty_search_and_board_say_how_memory_fills(tmp_path):
    assert "memvault install claude-code" in memvault("search", "anything", home=tmp_path).stdout
    assert "memvault session register --manual" in memvault("session", "list", home=tmp_path).stdout


class _OtherProgram(BaseHTTPRequestHandler):
    """What another program on memvault's port answers: an HTML page for every path."""

    def do_GET(self) -> None:
        page = b"<!doctype html><html><body><h1>Welcome to my dev server</h1></body></html>"
        self.send_response(404 if "livez" in self.path else 200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args: object) -> None:
        pass


def test_another_program_on_the_port_is_named_not_printed(tmp_path):
    other = ThreadingHTTPServer(("127.0.0.1", 0), _OtherProgram)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{other.server_address[1]}"
    env = {**os.environ, "MEMVAULT_HOME": str(tmp_path), "MEMVAULT_URL": url}
    try:
        for command in ("status", "doctor"):
            result = subprocess.run(
                [sys.executable, "-m", "memvault.cli", command],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            said = result.stdout + result.stderr
            assert result.returncode == 1, said
            assert "<html" not in said and "Welcome" not in said, command
            assert f"{url} is not a memvault server" in " ".join(said.split()), command
            assert f"another program holds port {other.server_address[1]}" in said.lower()
        lines = said.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("problem  server"))
        assert lines[at + 1].split()[:3] == ["fix:", "another", "program"]  # not `memvault serve`
    finally:
        other.shutdown()
