"""What the CLI prints reads as text: help with plain metavars, reports without Python
values, and tables that stay one row a line when piped."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


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


def test_session_list_piped_prints_one_row_a_line(tmp_path):
    summary = "Replacing the implicit flow with PKCE in the login page of the web app"
    memvault(
        "session", "register", "--manual", "--topic", "auth", "--summary", summary, home=tmp_path
    )
    memvault("session", "register", home=tmp_path)
    lines = memvault("session", "list", home=tmp_path).stdout.splitlines()
    assert len(lines) == 3  # the header and two rows
    assert lines[0].split("\t")[:2] == ["Session ID", "Status"]
    assert lines[1].split("\t")[1:4] == ["active", "auth", summary]


def test_reports_print_words_not_python_values(tmp_path):
    memvault("session", "register", "--manual", home=tmp_path)
    out = memvault("organize", "--dry-run", home=tmp_path).stdout
    assert "kept active: 20" in out
    assert "['" not in out and "True" not in out and "keptActive" not in out


def test_commands_are_grouped_in_the_order_people_reach_for_them(tmp_path):
    out = memvault("--help", home=tmp_path).stdout
    panels = ["The server", "Remember and find", "The session board", "Keep memory tidy"]
    positions = [out.index(panel) for panel in [*panels, "Editors and hosts"]]
    assert positions == sorted(positions)
    assert out.index(" serve ") < out.index(" search ") < out.index(" rebuild ")
    assert "--install-completion" in out  # shell completion is on offer
