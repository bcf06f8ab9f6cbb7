"""Installs for Windows, exercised on any machine: the hook command each host's shell runs
there, MCP entries and pins holding drive letters, backslashes and non-ASCII folders, and
the commands memvault wrote before recognised again.

Claude Code runs a hook's command through Git Bash on Windows, which takes a backslash for
an escape; Cursor runs it through PowerShell, where a quoted program needs ``&``. Where a
real bash is at hand the command line is handed to it, to see the words it makes of it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path, PureWindowsPath

import pytest

from memvault.config import Settings
from memvault.install import ConfigError, install, uninstall
from memvault.install import commands as commands_module
from memvault.install.commands import Commands, is_memvault_hook
from memvault.platforms import command_program
from tests.install.support import read_json

VENV = r"C:\Users\me\.venv\Scripts"
SYNCED = "G:\\我的雲端硬碟\\Obsidian\\Agent"
SPACED = r"C:\Users\John Smith\AppData\Local\memvault\venv\Scripts"


def _commands(scripts: str, pinned: tuple[tuple[str, str], ...] = ()) -> Commands:
    folder = PureWindowsPath(scripts)
    return Commands(
        hook=str(folder / "memvault-hook.exe"),
        memvault=str(folder / "memvault.exe"),
        pinned=pinned,
        windows=True,
    )


def _bash_words(command: str) -> list[str]:
    """The words bash makes of ``command`` (its first word is the program it would run)."""
    done = subprocess.run(
        ["bash", "-c", f"printf '%s\\n' {command}"],
        capture_output=True,
        timeout=30,
        check=True,
    )
    return done.stdout.decode("utf-8").splitlines()


BASH = pytest.mark.skipif(shutil.which("bash") is None, reason="no bash to read the line")


@pytest.mark.parametrize(
    ("scripts", "host", "expected"),
    [
        (VENV, "claude-code", "C:/Users/me/.venv/Scripts/memvault-hook.exe claude-code"),
        (VENV, "cursor", "C:/Users/me/.venv/Scripts/memvault-hook.exe cursor"),
        (
            "G:\\我的雲端硬碟\\tools\\venv\\Scripts",
            "claude-code",
            "G:/我的雲端硬碟/tools/venv/Scripts/memvault-hook.exe claude-code",
        ),
        (SPACED, "claude-code", f'"{SPACED.replace(chr(92), "/")}/memvault-hook.exe" claude-code'),
        (SPACED, "cursor", f'& "{SPACED.replace(chr(92), "/")}/memvault-hook.exe" cursor'),
    ],
)
def test_a_windows_hook_command_is_written_for_the_hosts_shell(scripts, host, expected):
    assert _commands(scripts).hook_command(host) == expected


@BASH
@pytest.mark.parametrize("scripts", [VENV, SPACED, "G:\\我的雲端硬碟\\tools\\venv\\Scripts"])
def test_git_bash_reads_claude_codes_hook_command_as_the_path_that_was_installed(scripts):
    command = _commands(scripts).hook_command("claude-code")
    program = PureWindowsPath(scripts) / "memvault-hook.exe"
    # Backslashes unquoted would reach bash as escapes: C:Usersme.venvScripts...
    assert _bash_words(command) == [program.as_posix(), "claude-code"]
    assert PureWindowsPath(_bash_words(command)[0]) == program


@pytest.mark.parametrize("char", ["$", "`", "%"])
def test_a_hook_path_a_windows_shell_would_expand_is_refused_naming_it(char):
    commands = _commands(rf"C:\Users\a b{char}c\Scripts")
    with pytest.raises(ConfigError, match=f"holds '\\{char}'" if char == "$" else "holds"):
        commands.hook_command("claude-code")


def test_a_windows_install_writes_forward_slash_hooks_and_the_mcp_path_as_it_is(tmp_path):
    settings = Settings(home=tmp_path / "memvault", vault=Path(SYNCED))
    pinned = (("MEMVAULT_HOME", SYNCED + "\\.memvault"), ("MEMVAULT_VAULT", SYNCED))
    commands = _commands(SPACED, pinned)
    user = tmp_path / "user"
    report = install("claude-code", settings=settings, commands=commands, user_home=user)
    hooks = read_json(user / ".claude" / "settings.json")["hooks"]
    written = {h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]}
    assert written == {f'"{PureWindowsPath(commands.hook).as_posix()}" claude-code'}
    server = read_json(user / ".claude.json")["mcpServers"]["memvault"]
    # Started without a shell: the program's own path, and the pins, byte for byte.
    assert server["command"] == commands.memvault
    assert server["env"] == {"MEMVAULT_HOME": SYNCED + "\\.memvault", "MEMVAULT_VAULT": SYNCED}
    assert "我的雲端硬碟" in (user / ".claude.json").read_text("utf-8")
    note = next(n for n in report.notes if "setx" in n)  # the hook's only: not the vault
    assert f"setx MEMVAULT_HOME {SYNCED}\\.memvault" in note and "MEMVAULT_VAULT" not in note
    uninstall("claude-code", settings=settings, user_home=user)
    assert not (user / ".claude" / "settings.json").exists()


def test_on_windows_the_pins_a_hook_cannot_carry_are_given_as_setx_lines(tmp_path):
    settings = Settings(home=tmp_path / "memvault")
    pinned = (("MEMVAULT_HOME", SYNCED), ("MEMVAULT_URL", "http://127.0.0.1:4555"))
    report = install(
        "cursor", settings=settings, commands=_commands(VENV, pinned), user_home=tmp_path / "u"
    )
    note = next(n for n in report.notes if "setx" in n)
    assert f"setx MEMVAULT_HOME {SYNCED}" in note
    assert "setx MEMVAULT_URL http://127.0.0.1:4555" in note
    command = read_json(tmp_path / "u" / ".cursor" / "hooks.json")["hooks"]["stop"][0]["command"]
    assert "MEMVAULT_" not in command


@pytest.mark.parametrize(
    "command",
    [
        "C:/Users/me/.venv/Scripts/memvault-hook.exe claude-code",
        '"C:/Users/John Smith/venv/Scripts/memvault-hook.exe" claude-code',
        '& "C:/Users/John Smith/venv/Scripts/memvault-hook.exe" cursor',
        # What memvault wrote on Windows before: the path as cmd.exe quotes it.
        r"C:\Users\me\.venv\Scripts\memvault-hook.exe claude-code",
        r'"C:\Program Files\memvault\Scripts\memvault-hook.exe" cursor',
        "G:/我的雲端硬碟/venv/Scripts/MEMVAULT-HOOK.EXE cursor",
    ],
)
def test_memvaults_windows_hook_commands_are_recognised_for_uninstall_and_doctor(command):
    assert is_memvault_hook(command)
    assert PureWindowsPath(command_program(command)).name.lower() == "memvault-hook.exe"


def test_the_commands_are_found_in_the_install_schemes_scripts_folder(tmp_path, monkeypatch):
    """A Python installed for all users keeps its scripts in ``Scripts``, not beside
    ``python.exe``: they are found there before PATH is searched."""
    scripts = tmp_path / "Python311" / "Scripts"
    scripts.mkdir(parents=True)
    (scripts / "memvault-hook.exe").write_bytes(b"")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "Python311" / "python.exe"))
    real = sysconfig.get_path

    def get_path(name: str, *args: object, **kwargs: object) -> str:
        return str(scripts) if name == "scripts" else real(name)

    monkeypatch.setattr(sysconfig, "get_path", get_path)
    monkeypatch.setenv("PATH", "")
    assert commands_module._executable("memvault-hook") == str(scripts / "memvault-hook.exe")


@pytest.mark.skipif(sys.platform != "win32", reason="runs the hook through Windows's shells")
@pytest.mark.parametrize("host", ["claude-code", "cursor"])
def test_on_windows_the_installed_hook_command_runs_in_the_hosts_shell(tmp_path, host):
    """On a Windows machine (the portable workflow's runner): the command line memvault
    writes runs the real hook through the host's shell, from a folder whose name holds a
    space and non-ASCII letters; with no server to reach, the hook spools its event."""
    import _winapi  # type: ignore[import-not-found]

    found = Commands.find(Settings(home=tmp_path / "state"))
    linked = tmp_path / "Jöhn Smith 我的" / "Scripts"
    linked.parent.mkdir()
    _winapi.CreateJunction(str(Path(found.hook).parent), str(linked))
    commands = Commands(hook=str(linked / Path(found.hook).name), memvault=found.memvault)
    shell = {
        "claude-code": [r"C:\Program Files\Git\bin\bash.exe", "-c"],
        "cursor": ["powershell", "-NoProfile", "-Command"],
    }[host]
    if not Path(shell[0]).exists() and not shutil.which(shell[0]):
        pytest.skip(f"{shell[0]} is not on this machine")
    home = tmp_path / "state"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")},
        "MEMVAULT_HOME": str(home),
        "MEMVAULT_URL": "http://127.0.0.1:9",
    }
    payload = {"session_id": "s1", "hook_event_name": "Stop", "cwd": str(tmp_path)}
    if host == "cursor":
        payload = {"conversation_id": "c1", "hook_event_name": "stop", "status": "completed"}
    subprocess.run(
        [*shell, commands.hook_command(host)],
        input=json.dumps(payload).encode(),
        env=env,
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert list((home / "spool").iterdir())


@pytest.mark.parametrize(("platform", "quoted"), [("win32", '"{}"'), ("linux", "'{}'")])
def test_the_undo_line_quotes_the_project_for_the_shell_it_is_pasted_into(
    home, memvault, tmp_path, monkeypatch, platform, quoted
):
    project = tmp_path / "my project"
    project.mkdir()
    monkeypatch.setattr(sys, "platform", platform)  # the one boundary that says which OS
    result = memvault("install", "claude-code", "--project", str(project))
    undo = f"memvault install claude-code --project {quoted.format(project)} --uninstall"
    assert undo in result.output.replace("\n", "")
