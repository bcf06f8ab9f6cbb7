"""One install per host: memvault user-wide and in a project at once would run every hook
twice per event and declare the MCP server twice, so the second install is refused with
the fix, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.install.support import tree


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    return folder


@pytest.mark.parametrize("host", ["claude-code", "cursor"])
def test_a_project_install_beside_a_user_install_is_refused(home, memvault, project, host):
    memvault("install", host)
    before = tree(project)
    refused = memvault("install", host, "--project", str(project), code=2)
    said = " ".join(refused.output.split())
    assert "installed for" in said and "user-wide already" in said
    assert "hook twice per event" in said and "MCP server twice" in said
    assert f"memvault install {host} --uninstall" in said
    assert tree(project) == before  # nothing written


def test_a_user_install_inside_a_project_with_memvault_is_refused(
    home, memvault, project, monkeypatch
):
    memvault("install", "claude-code", "--project", str(project))
    user_files = tree(home)
    monkeypatch.chdir(project / "src")  # anywhere inside the project
    refused = memvault("install", "claude-code", code=2)
    said = " ".join(refused.output.split())
    assert f"in the project {project} already" in said
    assert f"memvault install claude-code --project {project} --uninstall" in said
    assert tree(home) == user_files


def test_each_host_in_its_own_scope_is_fine(home, memvault, project, monkeypatch):
    memvault("install", "cursor")
    memvault("install", "claude-code", "--project", str(project))
    monkeypatch.chdir(project)
    memvault("install", "cursor")  # again: the same scope, nothing twice


def test_a_dry_run_is_refused_too(home, memvault, project):
    memvault("install", "claude-code")
    memvault("install", "claude-code", "--project", str(project), "--dry-run", code=2)
