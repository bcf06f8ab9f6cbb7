"""A throwaway user home per test, and the real ``memvault`` command run against it.

PATH holds only the folder of this Python's scripts, so no ``systemctl`` or ``launchctl``
is found and nothing reaches the service manager of the machine running the tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Place:
    user_home: Path
    memvault_home: Path
    env: dict[str, str]

    @property
    def log(self) -> Path:
        return self.memvault_home / "logs" / "server.log"


@pytest.fixture
def place(tmp_path: Path) -> Place:
    user_home = tmp_path / "user"
    user_home.mkdir()
    env = {
        "HOME": str(user_home),
        "USERPROFILE": str(user_home),
        "PATH": str(Path(sys.executable).parent),
        "MEMVAULT_HOME": str(tmp_path / "memvault"),
        "MEMVAULT_URL": "http://127.0.0.1:4111",
        "LANG": "C.UTF-8",
    }
    if "SYSTEMROOT" in os.environ:  # Windows needs it to start a process at all
        env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    return Place(user_home, tmp_path / "memvault", env)


@pytest.fixture
def memvault(place: Place) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``memvault …``; an exit code other than ``code`` fails the test."""

    def run(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "memvault.cli", *args],
            env=place.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == code, done.stdout + done.stderr
        return done

    return run
