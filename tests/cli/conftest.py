"""A real server on loopback and the real ``memvault`` console script, run as a person runs
it; each test's memory home is the server's or one with no server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONSOLE_SCRIPT = str(Path(sys.executable).with_name("memvault"))


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "AGENTMEMORY_"))}
    return {
        **env,
        "MEMVAULT_HOME": str(home),
        "MEMVAULT_EMBEDDINGS": "none",
        "COLUMNS": "200",
        **extra,
    }


def run(home: Path, *args: str, stdin: str | None = None, **extra: str):
    return subprocess.run(
        [CONSOLE_SCRIPT, *args],
        env=environment(home, **extra),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
