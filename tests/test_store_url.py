"""MEMVAULT_STORE_URL: which store memvault opens, and the engines it refuses."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from pydantic import ValidationError

from memvault import Memory
from memvault.config import Settings, settings_problems
from memvault.doctor import _store
from tests.helpers import envelope

REFUSED = "the PostgreSQL engine is not part of this version"


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
def test_postgresql_is_refused_with_one_line_that_says_why(tmp_path, url):
    with pytest.raises(ValidationError) as refused:
        Settings(home=tmp_path, store_location=url)
    [line] = settings_problems(refused.value)
    assert line.startswith("MEMVAULT_STORE_URL")
    assert REFUSED in line
    assert "hunter2" not in line


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


def test_the_cli_refuses_postgresql_at_start_with_one_line(tmp_path):
    env = {"MEMVAULT_HOME": str(tmp_path), "MEMVAULT_STORE_URL": "postgresql://db/memvault"}
    run = subprocess.run(
        [sys.executable, "-c", "from memvault.cli.entry import main; main()", "doctor"],
        env={k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")} | env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert REFUSED in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
