"""Relays under test: ``memvault mcp`` as hosts start it, against real servers."""

from __future__ import annotations

import os
import signal

import pytest

from memvault import server_process


@pytest.fixture
def started(tmp_path):
    """A home with no server yet; whatever server a test's clients start is ended after it."""
    home = tmp_path / "home"
    yield home
    recorded = server_process.read_pid_file(str(home))
    if recorded is not None and server_process.running(recorded[0]):
        os.kill(recorded[0], signal.SIGKILL)
