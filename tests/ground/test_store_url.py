"""MEMVAULT_STORE_URL: which store memvault opens (a SQLite file or a PostgreSQL database),
and how it says it cannot."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest
from pydantic import ValidationError

from memvault import Memory
from memvault.config import Settings
from memvault.doctor.storage import check_store as _store
from memvault.errors import MemvaultError, StoreUnavailable
from memvault.store import masked_url, open_store, schema_versions
from tests.helpers import Server, envelope, free_port, wait_for


def test_by_default_the_store_is_the_sqlite_file_in_memvault_home(tmp_path):
    settings = Settings(home=tmp_path)
    assert settings.store_url == f"sqlite:///{tmp_path / 'memvault.db'}"
    assert settings.store_path == tmp_path / "memvault.db"


def test_a_sqlite_url_names_its_file(tmp_path):
    elsewhere = tmp_path / "elsewhere" / "memory.db"
    settings = Settings(home=tmp_path / "home", store_location=f"sqlite:///{elsewhere}")
    assert settings.store_path == elsewhere
    assert (
        Settings(home=tmp_path, store_location="sqlite:///rel.db").store_path == tmp_path / "rel.db"
    )


def test_a_path_is_a_sqlite_file_a_relative_one_inside_memvault_home(tmp_path):
    assert Settings(home=tmp_path, store_location=str(tmp_path / "a.db")).store_path == (
        tmp_path / "a.db"
    )
    assert Settings(home=tmp_path, store_location="db/b.db").store_path == tmp_path / "db" / "b.db"
    assert Settings(home=tmp_path, store_location="  ").store_path == tmp_path / "memvault.db"


@pytest.mark.parametrize("url", ["postgresql://me:hunter2@db/memvault", "postgres://db/m"])
def test_a_postgresql_url_names_that_database_and_has_no_file(tmp_path, url):
    settings = Settings(home=tmp_path, store_location=url)
    assert settings.store_url == url
    with pytest.raises(ValueError) as refused:
        _ = settings.store_path
    [line] = str(refused.value).splitlines()
    assert "PostgreSQL store, not a SQLite file" in line
    assert "hunter2" not in line


def test_without_psycopg_a_postgresql_store_is_refused_in_one_line_naming_the_extra(
    monkeypatch,
):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the extra were not installed
    for call in (open_store, schema_versions):
        with pytest.raises(MemvaultError) as refused:
            call("postgresql://me:hunter2@127.0.0.1/memvault")
        [line] = str(refused.value).splitlines()
        assert "pip install 'memvault[postgres]'" in line and "hunter2" not in line


def test_a_postgresql_store_that_cannot_be_reached_fails_in_one_line_without_its_password():
    url = f"postgresql://me:hunter2@127.0.0.1:{free_port()}/memvault"
    started = time.monotonic()
    for call in (open_store, schema_versions):
        with pytest.raises(StoreUnavailable) as failed:
            call(url)
        [line] = str(failed.value).splitlines()
        assert line.startswith("cannot connect to the PostgreSQL store postgresql://me:***@")
        assert "hunter2" not in line
    assert time.monotonic() - started < 5  # refused at once, not retried for long


def test_a_password_given_as_a_parameter_is_not_shown_either():
    assert masked_url("postgresql://db/m?sslmode=require&password=hunter2") == (
        "postgresql://db/m?sslmode=require&password=***"
    )


def test_memory_opens_the_postgresql_store_the_url_names(tmp_path, monkeypatch, postgres_cluster):
    url = postgres_cluster.database()
    assert schema_versions(url) is None  # an empty database: no store there yet
    monkeypatch.setenv("MEMVAULT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMVAULT_STORE_URL", url)
    with Memory.open() as memory:
        memory.observe(envelope("s1", 1))
        stats = memory.store.stats()
        assert (stats.engine, stats.location, stats.events) == ("postgres", url, 1)
    assert not (tmp_path / "home" / "memvault.db").exists()
    applied, newest = schema_versions(url)
    assert applied == newest
    finding = _store(Settings())
    assert url in finding.finding and "current" in finding.finding


def test_an_unknown_scheme_is_refused(tmp_path):
    with pytest.raises(ValidationError, match="mysql:// names no engine"):
        Settings(home=tmp_path, store_location="mysql://db/m")


def test_memory_opens_the_store_the_url_names_and_health_reports_it(tmp_path, monkeypatch):
    there = tmp_path / "data" / "kept.db"
    monkeypatch.setenv("MEMVAULT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMVAULT_STORE_URL", f"sqlite:///{there}")
    with Memory.open() as memory:
        memory.observe(envelope("s1", 1))
        assert memory.store.stats().location == str(there)
    assert there.exists()
    assert not (tmp_path / "home" / "memvault.db").exists()
    finding = _store(Settings())
    assert str(there) in finding.finding and "current" in finding.finding


def test_the_cli_refuses_an_unknown_engine_at_start_with_one_line(tmp_path):
    run = _cli(tmp_path, "mysql://me:hunter2@db/memvault", "doctor")
    assert run.returncode == 2
    assert "mysql:// names no engine" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_the_cli_says_in_one_line_that_a_postgresql_store_cannot_be_reached(tmp_path):
    url = f"postgresql://me:hunter2@127.0.0.1:{free_port()}/memvault"
    run = _cli(tmp_path, url, "graph", "stats")
    assert run.returncode == 2
    [line] = run.stderr.strip().splitlines()
    assert "cannot connect to the PostgreSQL store postgresql://me:***@127.0.0.1" in line
    assert "hunter2" not in run.stdout + run.stderr


def _cli(home, url: str, *args: str) -> subprocess.CompletedProcess:
    # No server: the command opens the store in its own process.
    env = {"MEMVAULT_HOME": str(home), "MEMVAULT_STORE_URL": url}
    return subprocess.run(
        [sys.executable, "-c", "from memvault.cli.entry import main; main()", *args],
        env={k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")} | env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
def test_memvault_serve_runs_on_the_postgresql_store_the_url_names(tmp_path, postgres_cluster):
    url = postgres_cluster.database()
    server = Server(tmp_path / "home", {"MEMVAULT_STORE_URL": url}).start(timeout=60)
    try:
        first = httpx.post(f"{server.url}/agentmemory/observe", json=envelope("s1", 1))
        again = httpx.post(f"{server.url}/agentmemory/observe", json=envelope("s1", 1))
        assert first.json()["eventSeq"] == 1 and again.json()["deduplicated"] is True

        def found():
            answer = httpx.post(f"{server.url}/agentmemory/search", json={"query": "npm test"})
            return [hit["id"] for hit in answer.json()["results"]]

        # Indexed by the server's follower: the event, then its session as a whole.
        wait_for(lambda: len(found()) == 2, timeout=30)
        assert sorted(found()) == ["obs_1", "session:s1"]
        store = httpx.get(f"{server.url}/agentmemory/health").json()["store"]
        assert (store["engine"], store["location"], store["events"]) == ("postgres", url, 1)
    finally:
        server.stop()
    assert not (tmp_path / "home" / "memvault.db").exists()
