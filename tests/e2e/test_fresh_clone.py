"""A person who clones the repository gets a suite that collects: nothing it needs lives
outside the clone (only licensed benchmark data, which its tests skip without)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import require_tool

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_fresh_clone_with_nothing_beside_it_collects_every_test(tmp_path):
    require_tool("git")
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "alone" / "memvault"
    subprocess.run(
        ["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=120
    )
    assert not (clone.parent / "shared").exists()
    env = {k: v for k, v in os.environ.items() if k != "CI"}  # a person, not CI
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert " error" not in result.stdout.splitlines()[-1]
    assert "tests collected" in result.stdout.splitlines()[-1]
