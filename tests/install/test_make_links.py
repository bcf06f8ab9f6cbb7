"""`make`'s links to the commands: made once, with the exact line to add to PATH when its
folder is not there; a second run changes and says nothing. Runs the real make against a
throwaway HOME, with the installed virtualenv taken as it is (`-o`: never rebuilt here)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STAMP = ROOT / ".venv" / ".installed"


def make_link(home: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "--no-print-directory", "-o", ".venv/.installed", f"{home}/.local/bin/memvault"],
        cwd=ROOT,
        env={**os.environ, "HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


@pytest.mark.skipif(
    shutil.which("make") is None or not STAMP.exists(), reason="needs make and .venv"
)
def test_the_link_is_made_once_and_the_path_hint_gives_the_line_to_add(tmp_path):
    first = make_link(tmp_path).stdout
    link = tmp_path / ".local" / "bin" / "memvault"
    assert link.is_symlink() and link.resolve() == (ROOT / ".venv" / "bin" / "memvault").resolve()
    assert f'export PATH="{tmp_path}/.local/bin:$PATH"' in first.splitlines()[-1]
    again = make_link(tmp_path).stdout
    assert "==>" not in again and "PATH" not in again  # nothing re-linked, nothing re-said
    link.unlink()
    link.symlink_to(tmp_path / "gone")  # its .venv removed: dangling, made again
    assert "==> memvault is" in make_link(tmp_path).stdout
