"""The commands a host's config runs: ``memvault-hook <host>`` and ``memvault mcp``.

Hosts start hooks and MCP servers with whatever PATH they were given, often a minimal one,
so configs name the executables by absolute path: the ones installed beside the Python
that runs this installer, else the first on PATH, else the bare name.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.install.files import Artifact, Stripped, expect, load_json

HOOK = "memvault-hook"
MCP_SERVER = "memvault"  # the server's name in every host's MCP config


@dataclass(frozen=True, slots=True)
class Commands:
    """Absolute paths of the two executables the configs run (bare names when not found)."""

    hook: str
    memvault: str

    @classmethod
    def find(cls) -> Commands:
        return cls(hook=_executable(HOOK), memvault=_executable("memvault"))

    @property
    def found(self) -> bool:
        return os.path.isabs(self.hook) and os.path.isabs(self.memvault)

    def hook_command(self, host: str) -> str:
        """The shell command line a hook entry runs for ``host``."""
        if os.name == "nt":
            return subprocess.list2cmdline([self.hook, host])
        return f"{shlex.quote(self.hook)} {host}"

    def mcp_server(self) -> dict[str, Any]:
        return {"type": "stdio", "command": self.memvault, "args": ["mcp"]}


def _executable(name: str) -> str:
    scripts = Path(sys.executable).parent
    for candidate in (name, f"{name}.exe"):
        if (scripts / candidate).is_file():
            return str(scripts / candidate)
    return shutil.which(name) or name


def is_memvault_hook(command: object) -> bool:
    """Whether a hook entry's command runs memvault's hook, wherever it is installed."""
    if not isinstance(command, str) or HOOK not in command:
        return False
    try:
        words = shlex.split(command, posix=os.name != "nt")
    except ValueError:
        words = command.split()
    if not words:
        return False
    program = words[0].strip("\"'").replace("\\", "/").rsplit("/", 1)[-1].lower()
    return program in (HOOK, f"{HOOK}.exe")


def mcp_servers(path: Path, commands: Commands, role: str = "MCP server") -> Artifact:
    """The ``memvault`` entry under ``mcpServers`` in a Cursor or Claude Code MCP config."""

    def put(data: bytes | None) -> bytes:
        document, style = load_json(path, data)
        servers = expect(path, document.setdefault("mcpServers", {}), dict, '"mcpServers"')
        if servers.get(MCP_SERVER) == commands.mcp_server():
            return data if data is not None else style.dump(document)
        servers[MCP_SERVER] = commands.mcp_server()
        return style.dump(document)

    def take(data: bytes) -> Stripped:
        document, style = load_json(path, data)
        servers = document.get("mcpServers")
        if not isinstance(servers, dict) or MCP_SERVER not in servers:
            return Stripped(data, empty=False)
        del servers[MCP_SERVER]
        return Stripped(style.dump(document), empty=document == {"mcpServers": {}})

    return Artifact(path, role, put, take)
