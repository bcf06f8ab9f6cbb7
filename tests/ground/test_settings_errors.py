"""A setting that cannot be used is one line naming it and what it accepts, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def run(args: list[str], env: dict[str, str], tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memvault.cli", *args],
        env={**os.environ, "MEMVAULT_HOME": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (
            ["status"],
            {"MEMVAULT_PORT": "abc"},
            "MEMVAULT_PORT (got 'abc'): must be a valid integer",
        ),
        (
            ["session", "list"],
            {"MEMVAULT_EMBEDDINGS": "bogus"},
            "MEMVAULT_EMBEDDINGS (got 'bogus'): must be one of 'auto', 'none', 'local' or 'openai'",
        ),
        (["status"], {"MEMVAULT_DEDUP_THRESHOLD": "7"}, "MEMVAULT_DEDUP_THRESHOLD (got '7')"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(tmp_path, args, env, expected):
    result = run(args, env, tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert expected in result.stderr


def test_a_port_out_of_range_is_refused_naming_the_option(tmp_path):
    result = run(["serve", "--port", "99999"], {}, tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "Invalid value for '--port'" in result.stderr
