"""``memvault import cursor | claude-code``, run as a subprocess like a person would."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memvault import Memory
from tests.importers.conftest import COMPOSER, CURSOR_JSONL


def memvault(home, *args):
    env = {
        **os.environ,
        "HOME": str(home),
        "MEMVAULT_HOME": str(home / "memvault"),
        "COLUMNS": "400",
    }
    for name in ("MEMVAULT_VAULT", "XDG_CONFIG_HOME", "MEMVAULT_URL"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "memvault.cli", "import", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize(("host", "events"), [("cursor", 18), ("claude-code", 17)])
def test_importing_twice_from_the_standard_places_adds_nothing_the_second_time(home, host, events):
    first = memvault(home, host, "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert (report["newEvents"], report["duplicates"], report["errorCount"]) == (events, 0, 0)

    again = json.loads(memvault(home, host, "--json").stdout)

    assert (again["newEvents"], again["duplicates"]) == (0, events)
    assert again["files"] == report["files"]


def test_the_summary_table_says_what_happened(home):
    bad = home / ".cursor" / "projects" / "Users-dev-code-demo-app" / "agent-transcripts"
    (bad / "broken.jsonl").write_text('{"role": "user"')  # still being written

    result = memvault(home, "cursor")

    assert result.returncode == 0, result.stderr
    out = result.stdout
    for row in ("files", "lines read", "events sent", "new events", "duplicates", "skipped"):
        assert row in out
    assert "turn ended" in out and "thinking" in out
    assert "Not imported" in out and "broken.jsonl" in out
    assert "truncated last line" in out
    assert "4/4 files" in result.stderr  # the progress bar
    with Memory.open(home=home / "memvault") as memory:
        assert len(memory.reads.events(CURSOR_JSONL)) == 10
        assert len(memory.reads.events(COMPOSER)) == 4


def test_a_path_and_a_project_can_be_given(home, fixtures):
    transcript = fixtures / "claude-code" / "transcripts" / "short.jsonl"

    result = memvault(home, "claude-code", "--path", str(transcript), "--project", "spotter-web")

    assert result.returncode == 0, result.stderr
    with Memory.open(home=home / "memvault") as memory:
        (session,) = memory.reads.sessions()
        assert session.project == "spotter-web"


def test_a_missing_path_is_refused(home):
    result = memvault(home, "claude-code", "--path", str(home / "nowhere"))

    assert result.returncode == 2
    assert "no such file or folder" in result.stderr and "nowhere" in result.stderr


def test_nothing_to_import_says_where_it_looked(tmp_path):
    result = memvault(tmp_path, "claude-code")

    assert result.returncode == 0, result.stderr
    assert "no Claude Code transcripts found" in result.stdout
