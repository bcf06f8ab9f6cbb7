"""A running server under real faults: a full disk, a read-only fragments folder, a database
another process holds locked. Each answers a clear 503 naming the problem, keeps nothing
half-written, shows in /health, and clears by itself once the fault is gone."""

from __future__ import annotations

import concurrent.futures
import uuid

import httpx
import pytest

from tests.helpers import Server, envelope, wait_for
from tests.hooks.runner import answer, fixture, hook_env, placed, run_hook, spooled
from tests.store.faults import fill, locked_by_another_process, read_only, small_disk

# Longer than any bounded wait (the lock wait is 5 s unless set lower), far shorter than
# the unbounded ones these tests pin down.
PATIENCE = 20.0
BIG = {"tool_name": "Bash", "tool_input": {"command": "cat log"}, "tool_output": "y" * 600_000}
# A server's imports alone take tens of seconds on two cores shared with a busy suite.
STARTUP = 120.0


def api(server: Server) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/agentmemory", timeout=PATIENCE)


def remember_body(project: str, n: int) -> dict:
    return {
        "project": project,
        "summary": f"finding number {n} about {uuid.uuid4().hex}",
        "facts": [f"fact {n} {uuid.uuid4().hex}"],
    }


def healthy(client: httpx.Client) -> bool:
    """/health says ok with no reason. Not at once when a fault goes: the check's probe
    write queues behind what the server's writer has to do first, longer on a busy
    machine than the probe's own bound."""
    health = client.get("/health").json()
    return (health["status"], health["reasons"]) == ("ok", [])


def fragment_files(folder) -> list[str]:
    """Every file in the folder, hidden and temporary ones too."""
    return sorted(p.name for p in folder.rglob("*") if p.is_file() and p.name != ".memvault.lock")


@pytest.fixture
def start_server(tmp_path):
    """Start servers with their own settings, patient with a busy machine; all are killed
    after the test."""
    started: list[Server] = []

    def start(env: dict[str, str] | None = None) -> Server:
        started.append(Server(tmp_path / "home", env))
        return started[-1].start(STARTUP)

    yield start
    for running in started:
        running.kill()


@pytest.fixture
def full_disk_server(tmp_path):
    """A server whose home (database and vault) is on a small disk of its own; its log is
    kept elsewhere, so the server can still say what happens when the disk is full."""
    with small_disk(tmp_path / "disk") as disk:
        home = disk / "home"
        home.mkdir()
        (home / "server.log").symlink_to(tmp_path / "server.log")
        server = Server(home, {"MEMVAULT_LOCK_WAIT_SECONDS": "1"})
        try:
            yield server.start(STARTUP), disk
        finally:
            server.kill()


def test_a_full_disk_answers_503_naming_it_and_writes_resume_when_space_returns(
    full_disk_server,
):
    """Every write that needs new space on the full disk answers 503.

    It once failed now and then: after ``/observe`` got its 503, ``/observe/bulk`` stored
    two small events. The server was right and the test assumed what a disk does not
    promise: SQLite's WAL is checkpointed every half second by a thread of its own, and
    after a checkpoint the next write starts the WAL again from its start, in blocks the
    file already holds (some 300 KB left from creating the schema), so a small write needs
    no new space at all. So the disk is filled with the WAL emptied first: every write then
    needs a block the disk no longer has."""
    server, disk = full_disk_server
    folder = server.home / "vault" / "agent-memory"
    with api(server) as client:
        assert client.post("/observe", json=envelope("full", 0)).status_code == 201
        assert client.post("/remember", json=remember_body("full", 0)).status_code == 201
        before = fragment_files(folder)
        memories = client.get("/memories").json()
        filler = fill(disk, server.home / "memvault.db")

        observed = client.post("/observe", json=envelope("full", 1, data=BIG))
        assert observed.status_code == 503, observed.text
        assert observed.json()["error"] == (
            f"the disk holding {server.home / 'memvault.db'} is full; nothing was written"
        )
        bulk = client.post(
            "/observe/bulk", json={"observations": [envelope("full", n) for n in (2, 3)]}
        )
        assert bulk.status_code == 503, bulk.text
        assert "is full" in bulk.json()["error"]
        started = client.post(
            "/session/start", json={"sessionId": "full-new", "project": "p", "cwd": "/p"}
        )
        assert started.status_code == 503, started.text
        assert "is full" in started.json()["error"]
        remembered = client.post("/remember", json=remember_body("full", 1))
        assert remembered.status_code == 503, remembered.text
        assert remembered.json()["error"] == (
            f"the disk holding {folder} is full; nothing was written"
        )
        assert fragment_files(folder) == before  # no temporary file left behind
        assert client.get("/memories").json() == memories
        health = client.get("/health").json()
        assert health["status"] == "degraded"
        assert any("is full" in reason for reason in health["reasons"]), health["reasons"]

        filler.unlink()
        wait_for(lambda: healthy(client), timeout=PATIENCE)
        assert client.post("/observe", json=envelope("full", 1, data=BIG)).status_code == 201
        assert client.post("/remember", json=remember_body("full", 1)).status_code == 201
        session = client.get("/observations", params={"sessionId": "full"}).json()
        assert len(session["observations"]) == 2


def test_a_read_only_fragments_folder_answers_503_naming_it_and_writes_nothing(start_server):
    server = start_server()
    folder = server.home / "vault" / "agent-memory"
    with api(server) as client:
        assert client.post("/remember", json=remember_body("ro", 0)).status_code == 201
        before = fragment_files(folder)
        with read_only(folder):
            remembered = client.post("/remember", json=remember_body("ro", 1))
            assert remembered.status_code == 503, remembered.text
            assert remembered.json()["error"] == (
                f"the folder {folder} cannot be written (Read-only file system); "
                "nothing was written"
            )
            health = client.get("/health").json()
            assert health["status"] == "degraded"
            assert f"the vault folder {folder} cannot be written" in health["reasons"]
        assert fragment_files(folder) == before
        assert client.get("/health").json()["status"] == "ok"
        assert client.post("/remember", json=remember_body("ro", 1)).status_code == 201


def test_every_request_behind_a_locked_database_answers_503_within_the_bound(start_server):
    server = start_server({"MEMVAULT_LOCK_WAIT_SECONDS": "1"})
    with api(server) as client:
        assert client.post("/observe", json=envelope("locked", 0)).status_code == 201
        with locked_by_another_process(server.home / "memvault.db"):
            with concurrent.futures.ThreadPoolExecutor(6) as pool:
                answers = list(
                    pool.map(
                        lambda n: client.post("/observe", json=envelope("locked", n)),
                        range(1, 7),
                    )
                )
            for response in answers:
                assert response.status_code == 503, response.text
                assert "is locked by another process" in response.json()["error"]
                # MEMVAULT_LOCK_WAIT_SECONDS is the bound, not the store's default of 5 s
                assert "waited 1." in response.json()["error"], response.text
            started = client.post(
                "/session/start", json={"sessionId": "locked-new", "project": "p", "cwd": "/p"}
            )
            assert started.status_code == 503, started.text
            health = client.get("/health").json()
            assert health["status"] == "degraded"
            assert any("locked by another process" in r for r in health["reasons"])
        wait_for(lambda: healthy(client), timeout=PATIENCE)
        assert client.post("/observe", json=envelope("locked", 1)).status_code == 201
        observations = client.get("/observations", params={"sessionId": "locked"}).json()
        assert len(observations["observations"]) == 2


def test_a_hook_event_sent_while_the_database_is_locked_is_spooled_and_delivered_after(
    start_server, tmp_path
):
    server = start_server({"MEMVAULT_LOCK_WAIT_SECONDS": "1"})
    project = tmp_path / "project"
    project.mkdir()
    session = f"locked-hook-{uuid.uuid4().hex[:8]}"
    call = placed(fixture("claude-code", "PostToolUse"), project, session)
    # Long enough to hear the server's 503 rather than give up first.
    env = hook_env(server.home, server.url, MEMVAULT_HOOK_TIMEOUT_MS="20000")
    with locked_by_another_process(server.home / "memvault.db"):
        result = run_hook("claude-code", call, env, cwd=project)
        assert answer(result) is None
        assert b"HTTP 503" in result.stderr and b"locked by another process" in result.stderr
        assert len(spooled(server.home)) == 1
    with api(server) as client:

        def delivered():
            """the spooled event is stored"""
            found = client.get("/observations", params={"sessionId": session}).json()
            return len(found["observations"]) == 1 and not spooled(server.home)

        wait_for(delivered, timeout=PATIENCE)


def test_a_read_only_memory_folder_makes_board_changes_503_naming_it_and_changes_nothing(
    start_server,
):
    server = start_server()
    memory = server.home / "vault" / "memory"
    with api(server) as client:
        registered = client.post("/board/register", json={"manual": True, "topic": "auth"})
        assert registered.status_code == 200, registered.text
        session = registered.json()["sessionId"]
        before = {p.name: p.read_bytes() for p in memory.rglob("*.md")}
        with read_only(memory):
            update = client.post(
                f"/board/sessions/{session}/update",
                json={"sections": {"Decisions": ["use PKCE"]}},
            )
            assert update.status_code == 503, update.text
            assert f"the folder {memory} cannot be written" in update.json()["error"]
            again = client.post("/board/register", json={"manual": True})
            assert again.status_code == 503, again.text
        assert {p.name: p.read_bytes() for p in memory.rglob("*.md")} == before
        assert client.post(
            f"/board/sessions/{session}/update", json={"sections": {"Decisions": ["x"]}}
        ).json()["ok"]


def test_a_database_deleted_under_the_server_answers_503_and_the_hook_keeps_its_event(
    start_server, tmp_path
):
    """A database file deleted while the server runs still takes writes (an open file
    lives on), and all of it would be gone at the next start: writes are refused naming
    it, /health says so, and the hook keeps its event to send once memvault restarts."""
    server = start_server()
    project = tmp_path / "project"
    project.mkdir()
    with api(server) as client:
        assert client.post("/observe", json=envelope("before", 0)).status_code == 201
        for suffix in ("", "-wal", "-shm"):
            (server.home / f"memvault.db{suffix}").unlink(missing_ok=True)
        refused = client.post("/observe", json=envelope("after", 0))
        assert refused.status_code == 503, refused.text
        assert "memvault.db was deleted while memvault was running" in refused.json()["error"]
        health = client.get("/health").json()
        assert health["status"] == "degraded"
        assert any("was deleted while memvault was running" in r for r in health["reasons"])
    session = f"deleted-{uuid.uuid4().hex[:8]}"
    call = placed(fixture("claude-code", "PostToolUse"), project, session)
    env = hook_env(server.home, server.url, MEMVAULT_HOOK_TIMEOUT_MS="20000")
    result = run_hook("claude-code", call, env, cwd=project)
    assert answer(result) is None
    assert b"HTTP 503" in result.stderr and b"was deleted" in result.stderr
    assert len(spooled(server.home)) == 1
    assert not (server.home / "memvault.db").exists()  # no empty database made in its place
