"""Every command that reads or changes memory, run against one running server: the server
does the work, and the CLI process never opens the memory's database itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.cli.conftest import CONSOLE_SCRIPT, environment, run
from tests.helpers import wait_for

SUMMARY = "The checkout test was flaky because the payment mock retried."


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def saved(home: Path) -> str:
    """A fragment saved through the CLI; its id as search gives it."""
    done = json.loads(
        ok(
            run(
                home,
                "save",
                "--project",
                "demo-app",
                "--summary",
                SUMMARY,
                "--fact",
                "why: x",
                "--json",
            )
        )
    )
    assert done["action"] in ("created", "merged")
    found = json.loads(ok(run(home, "search", "payment mock", "--json")))["results"]
    return next(r["id"] for r in found if r["kind"] == "fragment")


def database_files(pid: int) -> list[str]:
    """What the process ``pid`` holds open of a memvault store (the file, its WAL, its SHM)."""
    held = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if "memvault.db" in target:
            held.append(target)
    return held


def waiting_at_the_question(home: Path, fragment_id: str) -> tuple[subprocess.Popen, list[str]]:
    """``fragments delete`` without --yes: it checks the id (through the server, or in its
    own process), then waits at its question. The files it holds open then, and it."""
    process = subprocess.Popen(
        [CONSOLE_SCRIPT, "fragments", "delete", fragment_id],
        env=environment(home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def asking() -> bool:
            """the command waits for its answer (sleeping on its stdin)"""
            stat = Path(f"/proc/{process.pid}/stat").read_text()
            wchan = Path(f"/proc/{process.pid}/wchan").read_text()
            return (
                stat.rpartition(")")[2].split()[0] == "S"
                and wchan != "0"
                and _read_stdin(process.pid)
            )

        wait_for(asking, timeout=60, interval=0.05)
        time.sleep(0.2)
        return process, database_files(process.pid)
    except BaseException:
        process.kill()
        raise


def _read_stdin(pid: int) -> bool:
    """Whether the process has asked its question: it is blocked reading stdin."""
    syscall = Path(f"/proc/{pid}/syscall").read_text().split()
    return bool(syscall) and syscall[0] == "0" and syscall[1] == "0x0"  # read(0, …)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_command_talking_to_the_server_holds_no_database_file(server):
    fragment_id = saved(server.home)
    process, held = waiting_at_the_question(server.home, fragment_id)
    process.communicate("n\n", timeout=30)
    assert held == []
    assert process.returncode == 1  # declined: nothing deleted
    assert json.loads(ok(run(server.home, "get", fragment_id, "--json")))["id"] == fragment_id


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_the_same_command_with_no_server_holds_the_database_itself(tmp_path):
    """The check above can fail: in process, the command holds the store open."""
    home = tmp_path / "home"
    fragment_id = saved(home)
    process, held = waiting_at_the_question(home, fragment_id)
    process.communicate("n\n", timeout=30)
    assert any(path.endswith("memvault.db") for path in held)


def test_search_with_a_server_imports_no_store_numpy_web_framework_or_mcp(server):
    saved(server.home)
    traced = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memvault.cli", "search", "payment", "--json"],
        env=environment(server.home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(traced.stdout)["results"], traced.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in traced.stderr.splitlines()}
    for heavy in ("numpy", "fastapi", "memvault.memory", "memvault.store", "mcp", "httpx"):
        assert heavy not in imported, f"{heavy} imported by a search with a server running"


def test_what_the_cli_saves_the_server_has_and_what_it_changes_the_server_changes(server):
    fragment_id = saved(server.home)
    api = f"{server.url}/agentmemory"
    assert httpx.get(f"{api}/fragments/{fragment_id}").status_code == 200

    shown = json.loads(ok(run(server.home, "get", fragment_id, "--json")))
    assert shown["kind"] == "fragment" and "why: x" in shown["body"]

    edited = json.loads(
        ok(run(server.home, "fragments", "edit", fragment_id, "--fact", "fix: no retry", "--json"))
    )
    assert "fix: no retry" in edited["body"]
    assert "fix: no retry" in httpx.get(f"{api}/fragments/{fragment_id}").json()["memory"]["body"]

    deleted = json.loads(
        ok(run(server.home, "fragments", "delete", fragment_id, "--yes", "--json"))
    )
    assert deleted["id"] == fragment_id
    assert httpx.get(f"{api}/fragments/{fragment_id}").status_code == 404


def test_the_board_commands_change_the_servers_board(server):
    registered = json.loads(
        ok(run(server.home, "session", "register", "--manual", "--topic", "auth", "--json"))
    )
    row = registered["sessionId"]
    on_server = httpx.get(f"{server.url}/agentmemory/board/sessions/{row}").json()
    assert on_server["session"]["topic"] == "auth"

    ok(run(server.home, "session", "update", row, "--section", "Decisions: use PKCE"))
    shown = json.loads(ok(run(server.home, "session", "show", row, "--json")))
    assert "use PKCE" in shown["snapshot"]
    assert row in ok(run(server.home, "session", "list"))
    continued = json.loads(ok(run(server.home, "session", "continue", "new", row, "--json")))
    assert continued["ok"]
    released = json.loads(
        ok(run(server.home, "session", "release", continued["sessionId"], row, "--json"))
    )
    assert released["ok"]
    report = json.loads(ok(run(server.home, "organize", "--dry-run", "--json")))
    assert row in report["keptActive"]
    archived = json.loads(ok(run(server.home, "session", "archive", row, "--json")))
    assert archived["ok"]
    assert httpx.get(f"{server.url}/agentmemory/board/sessions/{row}").status_code == 404


def test_upkeep_graph_export_and_import_go_through_the_server(server, tmp_path):
    saved(server.home)
    maintained = json.loads(ok(run(server.home, "maintain", "--dry-run", "--json")))
    assert maintained["dryRun"] is True and maintained["archived"] == []
    assert "document(s) indexed or updated" in ok(run(server.home, "reindex"))
    stats = json.loads(ok(run(server.home, "graph", "stats", "--json")))
    assert set(stats) == {"totalNodes", "totalEdges", "nodesByType", "edgesByType"}
    assert json.loads(ok(run(server.home, "graph", "query", "--json")))["truncated"] is False

    archive = tmp_path / "all.ndjson"
    assert "exported to" in ok(run(server.home, "export", "--events", "-o", str(archive)))
    records = [json.loads(line) for line in archive.read_text().splitlines()]
    assert records[0]["format"] == "memvault-export" and records[-1]["kind"] == "end"
    assert any(r.get("kind") == "fragment" for r in records)
    report = json.loads(ok(run(server.home, "import", "memvault", str(archive), "--json")))
    assert report["source"] == "memvault" and report["counts"]["fragment"]["existing"] >= 1


def test_a_transcript_import_sends_its_events_to_the_server(server, tmp_path):
    transcript = tmp_path / "projects" / "demo" / "cli-import-1.jsonl"
    transcript.parent.mkdir(parents=True)
    lines = [
        {
            "type": "user",
            "sessionId": "cli-import-1",
            "uuid": "u1",
            "timestamp": "2026-11-30T10:00:00.000Z",
            "cwd": "/home/dev/demo",
            "message": {"role": "user", "content": "Fix the flaky checkout test"},
        }
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = json.loads(
        ok(run(server.home, "import", "claude-code", "--path", str(transcript), "--json"))
    )
    assert report["files"] == 1 and report["newEvents"] + report["duplicates"] >= 1, report
    sessions = httpx.get(f"{server.url}/agentmemory/sessions").json()["sessions"]
    assert "cli-import-1" in {s["id"] for s in sessions}
