"""``memvault service install`` on Windows, exercised here: nothing is written, and the
Command Prompt lines it prints set the pinned settings (a logon task runs with the user's
environment variables), create the logon task and start it."""

from __future__ import annotations

import sys
from pathlib import PureWindowsPath

import pytest
from typer.testing import CliRunner

from memvault import service
from memvault.cli.app import app
from memvault.cli.service import _shell

SYNCED = "G:\\我的雲端硬碟\\Obsidian\\Agent"
MEMVAULT = r"C:\Users\John Smith\AppData\Local\memvault\venv\Scripts\memvault.exe"


def _task(memvault: str = MEMVAULT, home: str = r"C:\Users\John Smith\mv", pinned=()):
    # The home's path is joined as this machine joins paths; on Windows it is one of its own.
    return service.service_for(memvault, home, pinned, platform="windows")


def test_the_pinned_settings_are_set_with_setx_before_the_task_is_created_and_started(tmp_path):
    pinned = (("MEMVAULT_HOME", r"C:\Users\John Smith\mv"), ("MEMVAULT_VAULT", SYNCED))
    # Installing makes the log's folder; here, in a folder of the test's own.
    outcome = service.install(_task(home=str(tmp_path / "mv"), pinned=pinned))
    printed = [_shell(command, "windows") for command in outcome.to_run]
    assert printed[:2] == [
        r'setx MEMVAULT_HOME "C:\Users\John Smith\mv"',
        f"setx MEMVAULT_VAULT {SYNCED}",
    ]
    assert printed[2].startswith('schtasks /Create /TN memvault /SC ONLOGON /TR "cmd /c ')
    assert printed[3] == "schtasks /Run /TN memvault"
    assert "Command Prompt" in outcome.why_to_run


def test_the_task_runs_memvault_serve_through_cmd_with_its_output_appended_to_the_log():
    task = service.windows_task(MEMVAULT, PureWindowsPath(SYNCED) / "logs" / "server.log")
    run = task[task.index("/TR") + 1]
    assert run == f'cmd /c ""{MEMVAULT}" serve >> "{SYNCED}\\logs\\server.log" 2>&1"'
    # Printed for cmd.exe, each inner quote escaped the way schtasks reads its arguments.
    assert _shell(task, "windows").count('\\"') == run.count('"')


@pytest.mark.parametrize("path", [r"C:\100%\Scripts\memvault.exe", r"C:\%USERNAME%\memvault.exe"])
def test_a_path_cmd_would_expand_is_refused_naming_it(path):
    with pytest.raises(service.ServiceError, match="a % or a double quote in a path"):
        _task(path)


def test_a_task_command_longer_than_schtasks_takes_is_refused_with_its_length():
    deep = "C:\\" + "\\".join(["a-long-folder-name"] * 12) + "\\memvault.exe"
    with pytest.raises(service.ServiceError, match=r"\d+ characters, and schtasks takes 261"):
        _task(deep)


def test_service_install_on_windows_prints_the_command_prompt_lines(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMVAULT_HOME", str(tmp_path / "mv"))
    monkeypatch.setenv("MEMVAULT_URL", "http://127.0.0.1:4111")
    monkeypatch.setattr(sys, "platform", "win32")  # the one boundary that says which OS
    result = CliRunner().invoke(app, ["service", "install"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "nothing was installed: on Windows, Task Scheduler runs the server"
    assert f"  setx MEMVAULT_HOME {tmp_path / 'mv'}" in lines
    assert "  setx MEMVAULT_URL http://127.0.0.1:4111" in lines
    assert any(line.startswith("  schtasks /Create /TN memvault") for line in lines)
    # Nothing written but the log's folder, which cmd's >> would not make.
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")] == ["mv", "mv/logs"]
