"""``memvault service install|uninstall``: the unit and the agent it writes, written once,
removed whole, and checked by systemd's own verifier where it is there."""

from __future__ import annotations

import os
import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import service
from tests.helpers import IN_CI

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="a systemd unit or launchd agent")


def unit_lines(text: str) -> list[tuple[str, str, str]]:
    """(section, key, value) for each setting of a unit file, in order."""
    section, found = "", []
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif line and not line.startswith("#"):
            key, _, value = line.partition("=")
            found.append((section, key, value))
    return found


def this_memvault() -> str:
    scripts = Path(sys.executable).parent
    path = scripts / ("memvault.exe" if sys.platform == "win32" else "memvault")
    assert path.is_file(), f"memvault is not installed beside {sys.executable}"
    return str(path)


def test_the_unit_runs_this_memvault_serve_with_the_pinned_settings_and_appends_to_the_log(
    tmp_path,
):
    memvault = str(tmp_path / "bin" / "memvault")
    home = tmp_path / "state"
    pinned = (("MEMVAULT_HOME", str(home)), ("MEMVAULT_URL", "http://127.0.0.1:4111"))
    unit = service.service_for(memvault, home, pinned, platform="linux", user_home=tmp_path)
    assert unit.path == tmp_path / ".config" / "systemd" / "user" / "memvault.service"
    log = home / "logs" / "server.log"
    assert unit_lines(unit.content.decode()) == [
        ("Unit", "Description", "memvault memory server for AI coding agents"),
        ("Service", "Type", "exec"),
        ("Service", "ExecStart", f'"{memvault}" serve'),
        ("Service", "Environment", f'"MEMVAULT_HOME={home}"'),
        ("Service", "Environment", '"MEMVAULT_URL=http://127.0.0.1:4111"'),
        ("Service", "Restart", "on-failure"),
        ("Service", "RestartSec", "5"),
        ("Service", "StandardOutput", f"append:{log}"),
        ("Service", "StandardError", f"append:{log}"),
        ("Install", "WantedBy", "default.target"),
    ]


def test_the_unit_escapes_percent_signs_as_specifiers_and_keeps_a_dollar_in_a_path(tmp_path):
    memvault = str(tmp_path / "my 100% tools $HOME" / "memvault")
    home = tmp_path / "50%"
    unit = service.service_for(
        memvault, home, (("MEMVAULT_HOME", str(home)),), platform="linux", user_home=tmp_path
    )
    settings = dict((key, value) for _, key, value in unit_lines(unit.content.decode()))
    escaped = memvault.replace("%", "%%")  # a $ stays: the executable's path is literal
    assert settings["ExecStart"] == f'"{escaped}" serve'
    assert settings["Environment"] == f'"MEMVAULT_HOME={str(home).replace("%", "%%")}"'
    assert settings["StandardOutput"] == f"append:{str(home).replace('%', '%%')}/logs/server.log"


def test_an_executable_path_systemd_would_refuse_is_refused_naming_it(tmp_path):
    for path in ('/opt/my "tools"/memvault', "/opt/it's/memvault", "/opt/back\\slash/memvault"):
        with pytest.raises(service.ServiceError, match="systemd does not run a program") as e:
            service.service_for(path, tmp_path, (), platform="linux", user_home=tmp_path)
        assert repr(path) in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_a_setting_with_a_line_break_is_refused_naming_it(tmp_path):
    with pytest.raises(service.ServiceError, match="MEMVAULT_VAULT holds a line break"):
        service.service_for(
            "/bin/memvault", tmp_path, (("MEMVAULT_VAULT", "a\nExecStartPre=/bin/evil"),)
        )


def test_the_launchd_agent_runs_at_load_restarts_after_a_failure_and_logs_to_the_log(tmp_path):
    memvault = str(tmp_path / "bin" / "memvault")
    home = tmp_path / "state"
    pinned = (("MEMVAULT_HOME", str(home)), ("MEMVAULT_VAULT", str(tmp_path / "Vault")))
    agent = service.service_for(
        memvault, home, pinned, platform="macos", user_home=tmp_path, uid=501
    )
    assert agent.path == tmp_path / "Library" / "LaunchAgents" / "dev.memvault.server.plist"
    log = str(home / "logs" / "server.log")
    assert plistlib.loads(agent.content) == {
        "Label": "dev.memvault.server",
        "ProgramArguments": [memvault, "serve"],
        "EnvironmentVariables": {
            "MEMVAULT_HOME": str(home),
            "MEMVAULT_VAULT": str(tmp_path / "Vault"),
        },
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": log,
        "StandardErrorPath": log,
        "ProcessType": "Background",
    }
    assert agent.start == (("launchctl", "bootstrap", "gui/501", str(agent.path)),)
    assert agent.unload == (("launchctl", "bootout", "gui/501/dev.memvault.server"),)


def test_on_windows_nothing_is_written_and_the_task_scheduler_line_is_given(tmp_path):
    memvault = str(tmp_path / "memvault.exe")
    task = service.service_for(memvault, tmp_path / "state", (), platform="windows")
    outcome = service.install(task)
    assert outcome.to_run and outcome.to_run[0][:4] == ("schtasks", "/Create", "/TN", "memvault")
    log = tmp_path / "state" / "logs" / "server.log"
    assert outcome.to_run[0][6:] == ("/TR", f'cmd /c ""{memvault}" serve >> "{log}" 2>&1"', "/F")
    assert [p.name for p in tmp_path.rglob("*")] == ["state", "logs"]  # the log's folder only
    assert service.uninstall(task).to_run == [("schtasks", "/Delete", "/TN", "memvault", "/F")]


def tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@POSIX
def test_install_writes_once_a_rerun_is_unchanged_and_uninstall_leaves_nothing(place, memvault):
    before = tree(place.user_home)
    first = memvault("service", "install")
    path = (
        service.unit_path(place.user_home)
        if sys.platform != "darwin"
        else (place.user_home / "Library" / "LaunchAgents" / "dev.memvault.server.plist")
    )
    assert f"wrote {path}" in first.stdout
    written = path.read_bytes()
    assert this_memvault().encode() in written
    assert f"MEMVAULT_URL={place.env['MEMVAULT_URL']}".encode() in written or (
        place.env["MEMVAULT_URL"].encode() in written
    )
    # No service manager reachable here: the commands are given instead of run.
    assert "run these in your login session" in first.stdout
    assert place.log.parent.is_dir()  # the service manager appends to a file, in a folder

    again = memvault("service", "install")
    assert f"unchanged {path}" in again.stdout
    assert path.read_bytes() == written

    gone = memvault("service", "uninstall")
    assert f"removed {path}" in gone.stdout
    assert tree(place.user_home) == before
    assert "nothing to remove" in memvault("service", "uninstall").stdout


@POSIX
def test_dry_run_shows_the_file_and_writes_nothing(place, memvault):
    shown = memvault("service", "install", "--dry-run")
    assert "would write" in shown.stdout and "serve" in shown.stdout
    assert tree(place.user_home) == []
    assert not place.memvault_home.exists()


@POSIX
def test_a_service_file_memvault_did_not_write_is_left_as_it_is(place, memvault):
    path = (
        service.unit_path(place.user_home)
        if sys.platform != "darwin"
        else (place.user_home / "Library" / "LaunchAgents" / "dev.memvault.server.plist")
    )
    path.parent.mkdir(parents=True)
    path.write_text("[Service]\nExecStart=/usr/bin/their-own-server\n")
    refused = memvault("service", "install", code=1)
    assert f"{path} exists and was not written by memvault" in refused.stderr
    assert (
        "was not written by memvault: left as it is"
        in memvault("service", "uninstall", code=1).stderr
    )
    assert path.read_text() == "[Service]\nExecStart=/usr/bin/their-own-server\n"


def _systemd_analyze() -> str:
    """systemd-analyze, where systemd is the machine's init (it is meant to be there); a
    skip elsewhere (macOS, Windows, containers without systemd, even under CI)."""
    found = shutil.which("systemd-analyze")
    if found is None:
        if IN_CI and os.path.isdir("/run/systemd/system"):
            pytest.fail("systemd runs this machine but systemd-analyze is not installed")
        pytest.skip("systemd-analyze is not installed (no systemd here)")
    return found


def test_systemd_analyze_verifies_the_unit_even_with_spaces_percent_and_dollar_signs(tmp_path):
    analyze = _systemd_analyze()
    folder = tmp_path / "my 100% $tools"
    folder.mkdir()
    memvault = folder / "memvault"
    memvault.write_text("#!/bin/sh\nexit 0\n")
    memvault.chmod(memvault.stat().st_mode | stat.S_IXUSR)
    home = tmp_path / "state 50%"
    unit = service.service_for(
        str(memvault),
        home,
        (("MEMVAULT_HOME", str(home)), ("MEMVAULT_URL", "http://127.0.0.1:4111")),
        platform="linux",
        user_home=tmp_path,
    )
    unit.path.parent.mkdir(parents=True)
    unit.path.write_bytes(unit.content)
    # A user manager needs a login session; the system mode checks the same syntax and
    # that ExecStart names an executable file.
    done = subprocess.run(
        [analyze, "verify", str(unit.path)], capture_output=True, text=True, timeout=60
    )
    complaints = [
        line for line in (done.stdout + done.stderr).splitlines() if "memvault.service" in line
    ]
    assert done.returncode == 0 and complaints == [], done.stdout + done.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="systemd's enable link")
def test_uninstall_without_a_session_removes_the_link_enable_made_and_says_how_to_stop_it(
    place, memvault
):
    memvault("service", "install")
    unit = service.unit_path(place.user_home)
    wants = unit.parent / "default.target.wants"
    wants.mkdir()
    (wants / "memvault.service").symlink_to(unit)  # what `systemctl --user enable` makes
    (wants / "other.service").symlink_to(unit.parent / "other.service")  # someone else's
    gone = memvault("service", "uninstall")
    assert "systemctl --user stop memvault.service" in gone.stdout
    assert tree(place.user_home) == [
        ".config",
        ".config/systemd",
        ".config/systemd/user",
        ".config/systemd/user/default.target.wants",
        ".config/systemd/user/default.target.wants/other.service",
    ]
