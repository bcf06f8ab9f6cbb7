"""A throwaway home folder per test, and the ``memvault`` command run against it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from memvault.cli.app import app


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's home folder; memvault's own state lives beside it."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("MEMVAULT_HOME", str(tmp_path / "memvault"))
    # A user install looks for a project install where it runs: not in the checkout's folders.
    monkeypatch.chdir(home)
    return home


@pytest.fixture
def memvault(home: Path) -> Callable[..., Result]:
    """Run ``memvault …``; a non-zero exit fails the test unless ``code`` says otherwise."""
    runner = CliRunner()

    def run(*args: str, code: int = 0) -> Result:
        result = runner.invoke(app, list(args), catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result

    return run
