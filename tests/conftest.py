"""Shared fixtures: real stores on real files."""

from __future__ import annotations

import pytest

from memvault import Memory


@pytest.fixture
def memory(tmp_path):
    with Memory.open(home=tmp_path / "home") as opened:
        yield opened
