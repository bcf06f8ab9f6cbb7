"""With no server the commands work in process; a server's refusal reads as the refusal
in process does; a server that runs but does not answer, or refuses the secret, is said."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.cli.conftest import run

REFUSED = [
    ["get", "nope"],
    ["fragments", "edit", "nope", "--fact", "x"],
    ["fragments", "delete", "nope", "--yes"],
    ["session", "show", "2026-01-01-0000-nobody"],
    ["session", "update", "2026-01-01-0000-nobody", "--section", "Decisions: none"],
    ["save", "--project", "demo-app", "--summary", " "],
    ["search", "x", "--kind", "nonsense"],
]


def test_with_no_server_the_commands_work_in_process(tmp_path):
    home = tmp_path / "home"
    made = run(home, "save", "--project", "demo-app", "--summary", "Loaders.", "--fact", "a: b")
    assert made.returncode == 0, made.stderr
    found = json.loads(run(home, "search", "loaders", "--json").stdout)["results"]
    assert [r["kind"] for r in found] == ["fragment"]
    assert run(home, "get", found[0]["id"]).returncode == 0
    assert (home / "memvault.db").exists()  # the memory opened here
    assert not (home / "server.pid").exists()  # and no server was started for it


@pytest.mark.parametrize("command", REFUSED, ids=" ".join)
def test_a_refusal_reads_the_same_from_the_server_as_in_process(server, tmp_path, command):
    here = run(tmp_path / "home", *command)
    there = run(server.home, *command)
    assert here.returncode != 0
    assert (there.returncode, there.stderr) == (here.returncode, here.stderr)


def test_a_server_that_runs_but_does_not_answer_is_named_and_nothing_opens_here(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    # A live process whose command line names memvault, as a server still loading is.
    silent = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "memvault"],
    )
    try:
        (home / "server.pid").write_text(f"{silent.pid}\nhttp://127.0.0.1:9\n")
        result = run(home, "search", "x")
        rebuild = run(home, "rebuild")
    finally:
        silent.kill()
        silent.wait()
    assert result.returncode == 1
    assert f"a memvault server (pid {silent.pid}) runs for {home}" in result.stderr
    assert "does not answer" in result.stderr
    assert rebuild.returncode == 1 and "second writer" in rebuild.stderr
    assert not (home / "memvault.db").exists()


def test_a_server_of_another_memory_is_left_alone(server, tmp_path):
    """The default address may answer for another home: only this home's server.pid, or
    MEMVAULT_URL, names this memory's server."""
    home = tmp_path / "other"
    result = run(home, "search", "payment", "--json", MEMVAULT_PORT=str(server.port))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["results"] == []
    assert (home / "memvault.db").exists()


def test_a_wrong_secret_is_said_and_the_right_one_works(start_server, tmp_path):
    server = start_server({"MEMVAULT_SECRET": "right-secret-value"})
    wrong = run(server.home, "search", "x", MEMVAULT_SECRET="wrong-secret-value")
    assert wrong.returncode == 1
    assert f"the memvault server at {server.url} refused the secret (HTTP 401)" in wrong.stderr
    right = run(server.home, "search", "x", "--json", MEMVAULT_SECRET="right-secret-value")
    assert right.returncode == 0, right.stderr
    assert json.loads(right.stdout)["results"] == []
