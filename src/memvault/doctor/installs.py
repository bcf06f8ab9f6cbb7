"""The doctor's look at this installation: which editors (hosts) have memvault's hooks and
MCP server registered, user-wide and in the project, whether the programs they run exist,
and the versions of memvault, Python and the MCP SDK. Which files a host reads comes from
the installers, so the doctor and ``memvault install`` never disagree about where
memvault's entries live."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from memvault import __version__
from memvault.config import Settings
from memvault.doctor.finding import OK, PROBLEM, WARN, Finding
from memvault.install import HOSTS, NAMES, Commands
from memvault.install.commands import MCP_SERVER, is_memvault_hook
from memvault.install.files import ConfigError, load_json
from memvault.platforms import command_program


@dataclass(frozen=True, slots=True)
class _Registration:
    hooks: list[str]  # memvault's hook commands in the host's hooks file
    mcp: str | None  # the command of the memvault MCP server entry
    files: list[Path]  # the files read
    folder: Path  # the host's own folder (where it keeps its config)


def check_hosts(settings: Settings, cwd: Path, user_home: Path) -> list[Finding]:
    findings: list[Finding] = []
    connected = False
    for host in HOSTS:
        user = _registration(host, user_home, settings, project=False)
        if isinstance(user, Finding):
            findings.append(user)
            connected = True  # a file memvault cannot read: named, not "not installed"
            continue
        found = _judge(host, user, "user-wide")
        connected = connected or bool(user.hooks or user.mcp)
        if found is None:  # not installed user-wide
            where = NAMES[host]
            level = WARN if user.folder.is_dir() else OK
            found = Finding(
                host,
                level,
                f"{where} is not connected to memvault"
                + (" (its settings folder exists)" if user.folder.is_dir() else ""),
                f"memvault install {host}" if level == WARN else None,
            )
        findings.append(found)
        if cwd.resolve() != user_home.resolve():
            project = _registration(host, cwd, settings, project=True)
            if isinstance(project, Finding):
                findings.append(project)
            elif project.hooks or project.mcp:
                connected = True
                findings.append(_judge(host, project, f"in {cwd}") or found)
                if user.hooks or user.mcp:
                    findings.append(_twice(host, user, project, cwd))
    if not connected:
        findings.append(
            Finding(
                "editors",
                PROBLEM,
                "no editor is connected: nothing is captured",
                "memvault install claude-code (or: memvault install cursor)",
            )
        )
    return findings


def _registration(
    host: str, root: Path, settings: Settings, *, project: bool
) -> _Registration | Finding:
    artifacts = HOSTS[host].artifacts(
        root, project=project, commands=Commands.find(settings), language=settings.language
    )
    hooks: list[str] = []
    mcp: str | None = None
    files = []
    for artifact in artifacts:
        if artifact.role not in ("hooks", "MCP server") or not artifact.path.is_file():
            continue
        files.append(artifact.path)
        try:
            document, _ = load_json(artifact.path, artifact.path.read_bytes())
        except (ConfigError, OSError) as exc:
            return Finding(
                host, PROBLEM, str(exc).split(" Nothing was changed")[0], "fix the file by hand"
            )
        if artifact.role == "hooks":
            hooks += [c for c in _commands(document.get("hooks")) if is_memvault_hook(c)]
        else:
            servers = document.get("mcpServers")
            entry = servers.get(MCP_SERVER) if isinstance(servers, dict) else None
            if isinstance(entry, dict):
                mcp = str(entry.get("command", ""))
    return _Registration(hooks, mcp, files, artifacts[0].path.parent)


def _twice(host: str, user: _Registration, project: _Registration, cwd: Path) -> Finding:
    """memvault installed both user-wide and for the project: the host runs both."""
    files = ", ".join(str(p) for p in [*user.files, *project.files])
    return Finding(
        host,
        PROBLEM,
        f"{NAMES[host]} has memvault both user-wide and in {cwd} ({files}): every hook "
        "runs twice per event (memory is given twice) and the MCP server is declared twice",
        f"memvault install {host} --project {shlex.quote(str(cwd))} --uninstall "
        f"(the user-wide install covers every project), or `memvault install {host} "
        "--uninstall` to keep the project's alone",
    )


def _commands(value: object) -> Iterator[str]:
    """Every hook command under a hooks object, whatever the host nests them in."""
    if isinstance(value, dict):
        command = value.get("command")
        if isinstance(command, str):
            yield command
        for inner in value.values():
            yield from _commands(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _commands(inner)


def _judge(host: str, found: _Registration, scope: str) -> Finding | None:
    """None when nothing of memvault's is registered there."""
    if not found.hooks and not found.mcp:
        return None
    fix = f"memvault install {host}" + (" --project ." if scope != "user-wide" else "")
    name = NAMES[host]
    # A hook is a command line; the MCP entry's command is the program itself (a path
    # with spaces included), started without a shell.
    programs = [command_program(command) for command in sorted(set(found.hooks))]
    for program in [*programs, *([found.mcp] if found.mcp else [])]:
        if program is not None and not _runs(program):
            return Finding(
                host,
                PROBLEM,
                f"{name} ({scope}) runs {program}, which does not exist",
                f"{fix} (writes the commands of this installation)",
            )
    if not found.hooks:
        return Finding(host, PROBLEM, f"{name} ({scope}) has the MCP entry but no hooks", fix)
    if not found.mcp:
        return Finding(host, PROBLEM, f"{name} ({scope}) has hooks but no MCP entry", fix)
    return Finding(host, OK, f"{name} ({scope}): hooks and MCP server registered")


def _runs(program: str) -> bool:
    if os.path.isabs(program):
        return os.path.isfile(program) and os.access(program, os.X_OK)
    return shutil.which(program) is not None


def check_versions() -> Finding:
    python = ".".join(map(str, sys.version_info[:3]))
    try:
        mcp = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        return Finding(
            "versions",
            PROBLEM,
            f"memvault {__version__}, Python {python}, and the mcp SDK is missing",
            "pip install --force-reinstall memvault",
        )
    return Finding("versions", OK, f"memvault {__version__}, Python {python}, mcp {mcp}")
