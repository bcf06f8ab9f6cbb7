"""The `memvault` command, run as a subprocess like a person would."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import httpx

from memvault import __version__
from tests.helpers import envelope, free_port, wait_for


def memvault(*args: str, env: dict[str, str] | None = None, timeout: float = 30):
    environ = {**os.environ, **(env or {})}
    environ.pop("MEMVAULT_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "memvault.cli", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=timeout,
    )


def test_version():
    result = memvault("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"memvault {__version__}"


def test_status_shows_what_health_says(server):
    httpx.post(f"{server.url}/agentmemory/observe", json=envelope("cli-status"))
    env = {"MEMVAULT_URL": server.url}
    result = memvault("status", env={**env, "AGENTMEMORY_URL": server.url})
    assert result.returncode == 0, result.stderr
    for label in ("status", "events", "store size", "pending writes", "server memory"):
        assert label in result.stdout
    assert "ok" in result.stdout
    raw = memvault("status", "--json", env={"AGENTMEMORY_URL": server.url})
    assert json.loads(raw.stdout)["store"]["events"] >= 1


def test_status_without_a_server_says_so_and_fails():
    port = free_port()
    result = memvault("status", env={"MEMVAULT_PORT": str(port)})
    assert result.returncode == 1
    assert f"no memvault server at http://127.0.0.1:{port}" in result.stderr
    assert "memvault serve" in result.stderr


def test_status_with_a_wrong_secret_reports_the_refusal(start_server):
    server = start_server({"MEMVAULT_SECRET": "right"})
    result = memvault("status", env={"AGENTMEMORY_URL": server.url, "MEMVAULT_SECRET": "wrong"})
    assert result.returncode == 1
    assert "401" in result.stderr and "unauthorized" in result.stderr


def test_serve_refuses_a_public_address_without_a_secret(tmp_path):
    env = {"MEMVAULT_HOME": str(tmp_path), "MEMVAULT_SECRET": "", "AGENTMEMORY_SECRET": ""}
    result = memvault("serve", "--host", "0.0.0.0", "--port", str(free_port()), env=env)
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0" in result.stderr
    assert "MEMVAULT_SECRET" in result.stderr
    assert not (tmp_path / "memvault.db").exists()


def test_serve_and_status_take_the_port_from_agentmemorys_variable(tmp_path):
    port = free_port()
    env = {**os.environ, "MEMVAULT_HOME": str(tmp_path), "III_REST_PORT": str(port)}
    process = subprocess.Popen(
        [sys.executable, "-m", "memvault.cli", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def answering():
            try:
                return httpx.get(f"http://127.0.0.1:{port}/agentmemory/livez").status_code == 200
            except httpx.TransportError:
                return False

        wait_for(answering, timeout=30)
        result = memvault("status", "--json", env={"III_REST_PORT": str(port)})
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["status"] == "ok"
    finally:
        process.terminate()
        process.wait(30)


def test_serve_refuses_a_vault_that_does_not_exist(tmp_path):
    env = {"MEMVAULT_HOME": str(tmp_path / "home"), "MEMVAULT_VAULT": str(tmp_path / "nope")}
    result = memvault("serve", "--port", str(free_port()), env=env)
    assert result.returncode == 2
    assert "MEMVAULT_VAULT" in result.stderr and "not a folder" in result.stderr


def test_serve_says_when_the_port_is_taken(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = memvault("serve", "--port", str(port), env={"MEMVAULT_HOME": str(tmp_path)})
    assert result.returncode == 2
    assert f"port {port} on 127.0.0.1 is in use" in result.stderr
    assert "by another program" in result.stderr and "--port" in result.stderr


def test_an_empty_board_is_said_to_be_empty(tmp_path):
    result = memvault("session", "list", env={"MEMVAULT_HOME": str(tmp_path)})
    assert result.returncode == 0 and "The board is empty" in result.stdout


def test_the_servers_worker_summarizes_a_session_when_a_turn_ends(start_server):
    running = start_server()
    session = "turn-end"
    for n in range(3):
        httpx.post(f"{running.url}/agentmemory/observe", json=envelope(session, n))
    queued = httpx.post(f"{running.url}/agentmemory/summarize", json={"sessionId": session})
    assert queued.status_code == 202 and queued.json()["queued"] in (True, False)
    from memvault import Memory

    with Memory.open(home=running.home) as memory:
        assert wait_for(lambda: memory.reads.session(session).summary_revision >= 1, timeout=15)


def test_a_separate_worker_process_catches_up_a_quiet_session(start_server):
    running = start_server()
    session = "worker-cli"
    for n in range(3):
        httpx.post(f"{running.url}/agentmemory/observe", json=envelope(session, n))
    running.stop()  # nothing summarized yet: three events, not idle for 30 minutes
    env = {"MEMVAULT_HOME": str(running.home), "MEMVAULT_IDLE_THRESHOLD_MS": "1"}
    result = memvault("worker", "--once", env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "3 job(s) run" in result.stdout  # the summary, then fragment and graph extraction
    from memvault import Memory

    with Memory.open(home=running.home) as memory:
        assert memory.reads.session(session).summary_revision == 1
        assert memory.reads.session_summary(session)["commands"]


def test_summarize_names_an_unknown_session(server):
    response = httpx.post(f"{server.url}/agentmemory/summarize", json={"sessionId": "nope"})
    assert response.status_code == 400 and "nope" in response.json()["error"]


def test_beside_a_running_server_a_worker_refuses_and_once_has_the_server_run_due_jobs(
    start_server,
):
    running = start_server()
    session = "beside"
    for n in range(3):
        httpx.post(f"{running.url}/agentmemory/observe", json=envelope(session, n))
    httpx.post(f"{running.url}/agentmemory/summarize", json={"sessionId": session})
    env = {"MEMVAULT_HOME": str(running.home)}
    refused = memvault("worker", env=env, timeout=60)
    assert refused.returncode == 2
    assert running.url in refused.stderr and "runs the pipeline itself" in refused.stderr
    result = memvault("worker", "--once", env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"\d+ job\(s\) run", result.stdout.strip())
    from memvault import Memory

    with Memory.open(home=running.home) as memory:
        assert wait_for(lambda: memory.reads.session(session).summary_revision == 1, timeout=15)


def test_serve_refuses_to_leave_the_pipeline_to_workers_on_sqlite(tmp_path):
    result = memvault(
        "serve",
        "--port",
        str(free_port()),
        env={"MEMVAULT_HOME": str(tmp_path), "MEMVAULT_WORKER_IN_SERVER": "false"},
    )
    assert result.returncode == 2
    assert "MEMVAULT_WORKER_IN_SERVER" in result.stderr and "one writer" in result.stderr
