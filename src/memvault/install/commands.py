"""The commands a host's config runs: ``memvault-hook <host>`` and ``memvault mcp``.

Hosts start hooks and MCP servers with whatever PATH they were given, often a minimal one,
so configs name the executables by absolute path: the ones installed beside the Python
that runs this installer, else the first on PATH, else the bare name.

An editor started from the desktop does not see the shell's environment either, so where
memvault keeps its state and where its server listens are pinned in the configs too, when
they are not the defaults: the hook then spools into the folder the server drains, and
talks to the server the user runs. See :func:`pins`.

On Windows each host runs a hook's command through its own shell (Claude Code through Git
Bash, Cursor through PowerShell): the command line is written for it, with the path in
forward slashes (see :mod:`memvault.platforms`). The MCP entry names its program and
arguments apart, which hosts start without a shell, so it holds the path as it is.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import sysconfig
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.config import DEFAULT_PORT, Settings
from memvault.hook.paths import default_home
from memvault.install.files import Artifact, ConfigError, Stripped, expect, load_json
from memvault.platforms import (
    GIT_BASH,
    POWERSHELL,
    UnquotableCommand,
    command_program,
    program_name,
    windows_command,
)

HOOK = "memvault-hook"
MCP_SERVER = "memvault"  # the server's name in every host's MCP config
DEFAULT_URL = f"http://127.0.0.1:{DEFAULT_PORT}"

# What the hook reads (memvault.hook.command): its spool folder and its server.
HOOK_VARIABLES = ("MEMVAULT_HOME", "MEMVAULT_URL")
# What `memvault mcp` reads besides: it opens the store and the vault itself.
MCP_VARIABLES = (*HOOK_VARIABLES, "MEMVAULT_VAULT")

# Both hosts run a hook's command through a shell on macOS and Linux, where a
# `NAME=value command` prefix sets the command's environment. No such prefix works in
# cmd.exe, so on Windows the hook gets no pins (install notes say what to do instead).
POSIX_SHELL = os.name != "nt"
# The shell each host runs a hook's command through on Windows.
WINDOWS_SHELLS = {"claude-code": GIT_BASH, "cursor": POWERSHELL}


@dataclass(frozen=True, slots=True)
class Commands:
    """Absolute paths of the two executables the configs run (bare names when not found),
    and the environment pinned for them (name, value pairs)."""

    hook: str
    memvault: str
    pinned: tuple[tuple[str, str], ...] = ()
    windows: bool | None = None  # the hosts' shells are Windows's; None: this machine's

    @classmethod
    def find(cls, settings: Settings) -> Commands:
        return cls(hook=_executable(HOOK), memvault=_executable("memvault"), pinned=pins(settings))

    @classmethod
    def portable(cls) -> Commands:
        """For a project's files, which a team commits and every clone shares: the bare
        command names, found on each person's PATH, and nothing of this machine pinned."""
        return cls(hook=HOOK, memvault="memvault")

    @property
    def on_path(self) -> bool:
        return all(shutil.which(name) for name in (self.hook, self.memvault))

    @property
    def found(self) -> bool:
        return os.path.isabs(self.hook) and os.path.isabs(self.memvault)

    @property
    def on_windows(self) -> bool:
        return not POSIX_SHELL if self.windows is None else self.windows

    @property
    def hook_pins(self) -> dict[str, str]:
        """The pins the hook command line carries (none where no shell prefix works)."""
        if self.on_windows:
            return {}
        return {name: value for name, value in self.pinned if name in HOOK_VARIABLES}

    @property
    def hook_pins_dropped(self) -> list[str]:
        """Names the hook should have pinned but its command line cannot carry (Windows)."""
        return [n for n, _ in self.pinned if n in HOOK_VARIABLES] if self.on_windows else []

    def hook_command(self, host: str) -> str:
        """The shell command line a hook entry runs for ``host``; ``ConfigError`` when the
        hook's path cannot be written for the host's shell on Windows."""
        if self.on_windows:
            try:
                return windows_command(self.hook, [host], WINDOWS_SHELLS[host])
            except UnquotableCommand as exc:
                raise ConfigError(str(exc)) from None
        prefix = "".join(f"{name}={shlex.quote(value)} " for name, value in self.hook_pins.items())
        return f"{prefix}{shlex.quote(self.hook)} {host}"

    def mcp_server(self) -> dict[str, Any]:
        server: dict[str, Any] = {"type": "stdio", "command": self.memvault, "args": ["mcp"]}
        env = {name: value for name, value in self.pinned if name in MCP_VARIABLES}
        if env:
            server["env"] = env
        return server


def pins(
    settings: Settings, environ: Mapping[str, str] = os.environ
) -> tuple[tuple[str, str], ...]:
    """The memvault ``settings`` of this environment that an editor would not otherwise see.

    * ``MEMVAULT_HOME``: the home memvault resolves here, as an absolute path, when the
      environment chooses it (``MEMVAULT_HOME`` set, or an ``XDG_DATA_HOME`` that moves
      the default); with neither, the hook finds the same default folder by itself.
    * ``MEMVAULT_URL``: the server's URL (``MEMVAULT_URL``/``AGENTMEMORY_URL``, or built
      from ``MEMVAULT_HOST``/``MEMVAULT_PORT``) when it is not the default one.
    * ``MEMVAULT_VAULT`` (the MCP server only): an external vault, when one is set.

    Defaults are left out, so a config holds nothing machine-specific it does not need.
    """
    found = []
    home = os.path.abspath(settings.home)
    without_xdg = {k: v for k, v in environ.items() if k != "XDG_DATA_HOME"}
    if "MEMVAULT_HOME" in environ or home != os.path.abspath(default_home(without_xdg)):
        found.append(("MEMVAULT_HOME", home))
    if settings.server_url != DEFAULT_URL:
        found.append(("MEMVAULT_URL", settings.server_url))
    if settings.vault is not None:
        found.append(("MEMVAULT_VAULT", os.path.abspath(settings.vault)))
    return tuple(found)


def _executable(name: str) -> str:
    """Beside this Python (a virtual environment's ``bin`` or ``Scripts``), in the scripts
    folder of its install scheme (``C:\\Python311\\Scripts`` is not beside
    ``C:\\Python311\\python.exe``), else on PATH."""
    folders = [Path(sys.executable).parent]
    scheme = sysconfig.get_path("scripts")
    if scheme and Path(scheme) not in folders:
        folders.append(Path(scheme))
    for scripts in folders:
        for candidate in (name, f"{name}.exe"):
            if (scripts / candidate).is_file():
                return str(scripts / candidate)
    return shutil.which(name) or name


def is_memvault_hook(command: object) -> bool:
    """Whether a hook entry's command runs memvault's hook, wherever it is installed, with
    or without ``NAME=value`` words before it."""
    if not isinstance(command, str) or HOOK not in command.lower():
        return False
    program = command_program(command)
    return program is not None and program_name(program) in (HOOK, f"{HOOK}.exe")


def strip_events(
    hooks: dict[str, Any],
    keep: tuple[str, ...],
    without_ours: Callable[[list[Any]], list[Any] | None],
) -> bool:
    """Take memvault's entries out of every event of a hooks object but ``keep``:
    ``without_ours`` gives an event's list without them, or None when none were there. An
    event left empty goes too (an empty key still makes an older host build balk at the
    file). True when anything was taken out."""
    removed = False
    for event in list(hooks):
        entries = hooks[event]
        if event in keep or not isinstance(entries, list):
            continue
        kept = without_ours(entries)
        if kept is None:
            continue
        removed = True
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return removed


def mcp_servers(path: Path, commands: Commands, role: str = "MCP server") -> Artifact:
    """The ``memvault`` entry under ``mcpServers`` in a Cursor or Claude Code MCP config.

    The entry is memvault's, except for ``env`` variables other than the ones it pins
    (``MEMVAULT_SECRET``, say), which are the user's and kept.
    """

    def put(data: bytes | None) -> bytes:
        document, style = load_json(path, data)
        servers = expect(path, document.setdefault("mcpServers", {}), dict, '"mcpServers"')
        wanted = _with_users_env(commands.mcp_server(), servers.get(MCP_SERVER))
        if servers.get(MCP_SERVER) == wanted:
            return data if data is not None else style.dump(document)
        servers[MCP_SERVER] = wanted
        return style.dump(document)

    def take(data: bytes) -> Stripped:
        document, style = load_json(path, data)
        servers = document.get("mcpServers")
        if not isinstance(servers, dict) or MCP_SERVER not in servers:
            return Stripped(data, empty=False)
        del servers[MCP_SERVER]
        if not servers:  # an empty mcpServers was memvault's alone
            del document["mcpServers"]
        return Stripped(style.dump(document), empty=not document)

    return Artifact(path, role, put, take, private=True)


def _with_users_env(server: dict[str, Any], current: object) -> dict[str, Any]:
    env = current.get("env") if isinstance(current, dict) else None
    if not isinstance(env, dict):
        return server
    theirs = {name: value for name, value in env.items() if name not in MCP_VARIABLES}
    if theirs:
        server["env"] = {**server.get("env", {}), **theirs}
    return server
