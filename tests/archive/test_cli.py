"""``memvault export`` and ``memvault import memvault``, run as a person runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from memvault import Memory
from tests.archive.conftest import events, files, fill
from tests.archive.test_agentmemory import export_data


def memvault(home, *args, stdin: bytes | None = None, cwd=None):
    env = {**os.environ, "MEMVAULT_HOME": str(home), "COLUMNS": "200"}
    for name in ("MEMVAULT_VAULT", "MEMVAULT_URL"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "memvault.cli", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=120,
        cwd=cwd,
    )


def test_export_then_import_moves_all_memory_to_another_home(source, tmp_path):
    archive = tmp_path / "memory.ndjson"
    source.close()  # the commands open the home themselves

    exported = memvault(source.settings.home, "export", "--events", "--output", str(archive))
    imported = memvault(tmp_path / "new", "import", "memvault", str(archive), "--json")

    assert exported.returncode == 0, exported.stderr
    assert "exported to" in exported.stdout.decode() and "events" in exported.stdout.decode()
    assert imported.returncode == 0, imported.stderr
    report = json.loads(imported.stdout)
    assert report["complete"] and report["problemCount"] == 0
    assert report["counts"]["event"]["new"] == 10
    assert files(tmp_path / "new" / "vault") == files(source.settings.vault_path)
    again = json.loads(
        memvault(tmp_path / "new", "import", "memvault", str(archive), "--json").stdout
    )
    assert sum(counts["new"] for counts in again["counts"].values()) == 0


def test_export_to_standard_output_and_import_from_standard_input(tmp_path):
    with Memory.open(home=tmp_path / "a") as memory:
        fill(memory)
        expected = events(memory)

    exported = memvault(tmp_path / "a", "export", "--events", "-o", "-")
    imported = memvault(tmp_path / "b", "import", "memvault", "-", "--json", stdin=exported.stdout)

    assert exported.stdout.startswith(b'{"format":"memvault-export"')
    assert imported.returncode == 0, imported.stderr
    with Memory.open(home=tmp_path / "b") as memory:
        assert events(memory) == expected


def test_export_without_an_output_writes_a_dated_file_here(tmp_path):
    result = memvault(tmp_path / "home", "export", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    (written,) = tmp_path.glob("memvault-export-*.ndjson")
    assert json.loads(written.read_text().splitlines()[0])["includes"] == {"events": False}


def test_the_summary_table_says_what_happened_per_kind(source, tmp_path):
    archive = tmp_path / "memory.ndjson"
    source.close()
    memvault(source.settings.home, "export", "--events", "-o", str(archive))
    *records, end = archive.read_bytes().splitlines(keepends=True)
    bad = b'{"kind": "fragment", "path": "../x.md", "text": ""}\n'
    archive.write_bytes(b"".join([*records, bad, end]))

    result = memvault(
        source.settings.home, "import", "memvault", str(archive), "--strategy", "skip"
    )

    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr
    assert "memvault 1 import (skip)" in out
    for word in ("kind", "new", "existing", "merged", "replaced", "skipped", "refused"):
        assert word in out
    assert "Problems" in out and "line" in out and "leaves its folder" in out
    assert "importing" in result.stderr.decode()  # the progress bar


def test_an_agentmemory_export_is_imported_by_the_same_command(tmp_path):
    path = tmp_path / "agentmemory-export.json"
    path.write_text(json.dumps(export_data(), indent=2))

    result = memvault(tmp_path / "home", "import", "memvault", str(path), "--json")

    report = json.loads(result.stdout)
    assert report["source"] == "agentmemory"
    assert report["counts"]["memory"]["new"] == 2


def test_a_newer_archive_is_refused_with_a_message_and_exit_code_2(tmp_path):
    path = tmp_path / "future.ndjson"
    path.write_text('{"format": "memvault-export", "version": 7}\n')

    result = memvault(tmp_path / "home", "import", "memvault", str(path))

    assert result.returncode == 2
    assert "version 7" in result.stderr.decode()
    assert not (tmp_path / "home" / "vault").exists() or not files(tmp_path / "home" / "vault")


def test_a_missing_file_is_named(tmp_path):
    result = memvault(tmp_path / "home", "import", "memvault", str(tmp_path / "nope.ndjson"))

    assert result.returncode == 2
    assert "no such file" in result.stderr.decode()
