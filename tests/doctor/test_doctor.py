"""`memvault doctor`, run as a person runs it, against real homes, files and servers."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.install import Commands, install
from tests.helpers import Server, free_port

# Settings of the machine running the tests that would change what the doctor finds.
_OWN = ("MEMVAULT_URL", "AGENTMEMORY_URL", "MEMVAULT_VAULT", "MEMVAULT_SECRET", "MEMVAULT_LLM")
_OWN += ("MEMVAULT_LLM_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "MEMVAULT_LLM_API_KEY")


@pytest.fixture
def place(tmp_path: Path) -> dict[str, Path]:
    """A user's home folder, memvault's home beside it, and a project to run in."""
    found = {
        "home": tmp_path / "home",
        "memvault": tmp_path / "memvault",
        "project": tmp_path / "project",
    }
    found["home"].mkdir()
    found["project"].mkdir()
    return found


def run(place: dict[str, Path], *args: str, url: str | None = None, **env: str):
    environ = {k: v for k, v in os.environ.items() if k not in _OWN}
    environ.update(
        HOME=str(place["home"]),
        MEMVAULT_HOME=str(place["memvault"]),
        MEMVAULT_URL=url or f"http://127.0.0.1:{free_port()}",
        COLUMNS="200",
        **env,
    )
    return subprocess.run(
        [sys.executable, "-m", "memvault.cli", *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=place["project"],
        timeout=60,
    )


def doctor(place: dict[str, Path], **kwargs) -> tuple[int, dict[str, dict]]:
    result = run(place, "doctor", "--json", **kwargs)
    report = json.loads(result.stdout)
    assert report["ok"] is (result.returncode == 0), result.stdout
    checks: dict[str, dict] = {}
    for check in report["checks"]:
        checks.setdefault(check["name"], check)  # the first of a name: user-wide for a host
    return result.returncode, checks


def test_a_fresh_home_with_no_server_names_each_problem_with_its_fix_and_writes_nothing(place):
    code, checks = doctor(place)
    assert code == 1
    assert checks["server"]["level"] == "problem"
    assert "no memvault server answers" in checks["server"]["finding"]
    assert checks["server"]["fix"] == "memvault serve"
    assert checks["editors"] == {
        "name": "editors",
        "level": "problem",
        "finding": "no editor is connected: nothing is captured",
        "fix": "memvault install claude-code (or: memvault install cursor)",
    }
    assert checks["store"]["level"] == "warn" and checks["store"]["fix"]
    assert not place["memvault"].exists()  # a check creates no store, vault or folder
    text = run(place, "doctor")
    assert text.returncode == 1
    assert "fix: memvault serve" in text.stdout and "2 problem(s) found" in text.stdout


def test_a_running_server_with_both_editors_installed_is_ok(place):
    server = Server(place["memvault"]).start()
    try:
        for host in ("claude-code", "cursor"):
            installed = run(place, "install", host, url=server.url)
            assert installed.returncode == 0, installed.stderr
        code, checks = doctor(place, url=server.url)
        problems = [c for c in checks.values() if c["level"] == "problem"]
        assert code == 0, problems
        assert checks["server"]["finding"].startswith("memvault ")
        assert checks["store"]["level"] == checks["vault"]["level"] == "ok"
        assert checks["index"]["level"] == "ok"
        for host, name in (("claude-code", "Claude Code"), ("cursor", "Cursor")):
            assert checks[host] == {
                "name": host,
                "level": "ok",
                "finding": f"{name} (user-wide): hooks and MCP server registered",
                "fix": None,
            }
        assert "editors" not in checks
        assert run(place, "doctor", url=server.url).stdout.strip().endswith("no problems found")
    finally:
        server.stop()


def test_a_hook_command_that_does_not_exist_is_a_problem_with_the_fix(place):
    gone = Commands(hook="/nowhere/bin/memvault-hook", memvault="/nowhere/bin/memvault")
    install(
        "claude-code",
        settings=Settings(home=place["memvault"]),
        user_home=place["home"],
        commands=gone,
    )
    code, checks = doctor(place)
    assert code == 1
    assert checks["claude-code"] == {
        "name": "claude-code",
        "level": "problem",
        "finding": "Claude Code (user-wide) runs /nowhere/bin/memvault-hook, which does not exist",
        "fix": "memvault install claude-code (writes the commands of this installation)",
    }
    assert "editors" not in checks  # connected, if badly


def test_a_project_whose_files_name_a_missing_command_is_fixed_in_the_project(place):
    gone = Commands(hook="/nowhere/bin/memvault-hook", memvault="/nowhere/bin/memvault")
    install(
        "cursor",
        settings=Settings(home=place["memvault"]),
        project=place["project"],
        commands=gone,
        user_home=place["home"],
    )
    result = run(place, "doctor", "--json")
    found = [c for c in json.loads(result.stdout)["checks"] if c["name"] == "cursor"]
    assert [c["level"] for c in found] == ["ok", "problem"]  # not user-wide; the project
    assert found[1]["finding"].startswith(f"Cursor (in {place['project']}) runs /nowhere/")
    assert found[1]["fix"].startswith("memvault install cursor --project .")


def test_memvault_installed_user_wide_and_for_the_project_is_a_problem_with_its_fix(place):
    settings = Settings(home=place["memvault"])
    # How it happens: a project's committed files, and a user install made elsewhere.
    install("claude-code", settings=settings, project=place["project"], user_home=place["home"])
    install("claude-code", settings=settings, user_home=place["home"], cwd=place["home"])
    code, _ = doctor(place)
    assert code == 1
    report = json.loads(run(place, "doctor", "--json").stdout)
    (twice,) = [c for c in report["checks"] if "twice" in c["finding"]]
    assert twice["name"] == "claude-code" and twice["level"] == "problem"
    assert f"both user-wide and in {place['project']}" in twice["finding"]
    assert str(place["home"] / ".claude" / "settings.json") in twice["finding"]
    assert str(place["project"] / ".mcp.json") in twice["finding"]
    assert twice["fix"].startswith(
        f"memvault install claude-code --project {place['project']} --uninstall"
    )


def test_a_spooled_file_set_aside_as_unreadable_is_a_problem(place):
    bad = place["memvault"] / "spool" / "bad"
    bad.mkdir(parents=True)
    (bad / "0001-broken.json").write_text("{not json")
    code, checks = doctor(place)
    assert code == 1
    assert checks["spool"]["level"] == "problem"
    assert "0001-broken.json" in checks["spool"]["finding"]
    assert str(bad) in checks["spool"]["fix"]


def test_a_store_written_by_a_newer_memvault_is_a_problem(place):
    place["memvault"].mkdir()
    with sqlite3.connect(place["memvault"] / "memvault.db") as conn:
        conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY)")
        conn.execute("INSERT INTO schema_migrations VALUES (9999)")
    conn.close()
    _, checks = doctor(place)
    assert checks["store"]["level"] == "problem"
    assert "schema 9999, newer than this memvault knows" in checks["store"]["finding"]


def test_an_llm_server_that_does_not_answer_is_a_problem_and_no_paid_api_is_called(place):
    url = f"http://127.0.0.1:{free_port()}/v1"
    _, checks = doctor(place, MEMVAULT_LLM_URL=url, MEMVAULT_LLM_MODEL="qwen3:4b")
    assert checks["llm"]["level"] == "problem"
    assert checks["llm"]["finding"].startswith(f"openai:qwen3:4b at {url} does not answer")
    assert checks["llm"]["fix"] == "start that server, or fix MEMVAULT_LLM_URL"


def test_a_server_of_another_vault_is_a_problem_naming_both(place, tmp_path):
    server = Server(place["memvault"]).start()
    mine = tmp_path / "My Vault"
    mine.mkdir()
    try:
        code, checks = doctor(place, url=server.url, MEMVAULT_VAULT=str(mine))
        assert code == 1
        found = checks["server"]
        assert found["level"] == "problem"
        assert str((place["memvault"] / "vault").resolve()) in found["finding"]
        assert str(mine) in found["finding"]
        assert found["fix"].startswith(f"MEMVAULT_HOME={server.home.resolve()} memvault stop")
    finally:
        server.stop()
