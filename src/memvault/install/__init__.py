"""Connecting a host to memvault: its hooks, its MCP server entry, and the agent rules.

``install("cursor")`` or ``install("claude-code")`` merges memvault's entries into the
host's own config files, user-wide or for one project, and ``uninstall`` takes them out
again. :mod:`memvault.install.files` owns the merge, backup and restore machinery; one
module per host knows which files that host reads and their format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.config import Settings
from memvault.install import claude_code, cursor
from memvault.install.commands import Commands
from memvault.install.files import Artifact, Backups, ConfigError, Outcome
from memvault.install.files import install as _install
from memvault.install.files import uninstall as _uninstall
from memvault.platforms import CMD, printed_command

HOSTS = {cursor.HOST: cursor, claude_code.HOST: claude_code}

__all__ = [
    "HOSTS",
    "Commands",
    "ConfigError",
    "DoubleInstall",
    "Report",
    "install",
    "installed_in",
    "uninstall",
]


class DoubleInstall(ConfigError):
    """memvault is installed for the host in the other scope already: a second install
    would run every hook twice per event and declare the MCP server twice."""


@dataclass(frozen=True, slots=True)
class Report:
    """What an install or uninstall did (or, in a dry run, would do) to each file."""

    host: str
    scope: str  # user | project
    root: Path
    action: str  # install | uninstall
    dry_run: bool
    files: list[Outcome]
    backups: Path
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(o.action not in ("unchanged", "absent") for o in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "scope": self.scope,
            "root": str(self.root),
            "action": self.action,
            "dryRun": self.dry_run,
            "changed": self.changed,
            "files": [o.to_dict() for o in self.files],
            "backups": str(self.backups),
            "notes": self.notes,
        }


def install(
    host: str,
    *,
    settings: Settings,
    project: Path | None = None,
    dry_run: bool = False,
    commands: Commands | None = None,
    user_home: Path | None = None,
    all_events: bool | None = None,
    cwd: Path | None = None,
) -> Report:
    """Merge memvault's hooks, MCP server and rules into ``host``'s config files.

    ``settings`` are this memory's: backups go under its ``home/install``, the rules are in
    its language, and the user's configs pin what the host would not see; ``project``
    selects project scope; ``user_home`` is the user's home folder (default: the current
    user's); ``all_events`` registers the hook events only newer host builds know as
    well (by default for Cursor, whose memory block at session start needs one of them;
    not for Claude Code, whose stable events already carry everything memvault reads).
    Raises :class:`ConfigError`, with nothing written, when a file is malformed, and
    :class:`DoubleInstall` when the host has memvault in the other scope already (the
    user's, or the project of ``cwd`` or a folder above it).
    """
    if all_events is None:
        all_events = host == cursor.HOST
    _refuse_a_second_scope(host, settings, project, user_home or Path.home(), cwd or Path.cwd())
    notes = _install_notes(host, project) + _event_notes(host, all_events)
    if project is not None:
        # A project's files are committed and shared: no path or setting of this machine.
        commands = commands or Commands.portable()
        notes += _portable_notes(commands, settings)
    else:
        commands = commands or Commands.find(settings)
        notes += _pin_notes(commands)
        if not commands.found:
            notes.insert(
                0,
                f"{commands.hook} or {commands.memvault} was not found beside this Python or "
                "on PATH; the configs name them bare, so the host's PATH must include them.",
            )
    return _run("install", host, settings, project, dry_run, commands, user_home, notes, all_events)


def uninstall(
    host: str,
    *,
    settings: Settings,
    project: Path | None = None,
    dry_run: bool = False,
    user_home: Path | None = None,
) -> Report:
    """Take memvault's entries out of ``host``'s config files, restoring what was there."""
    commands = Commands.find(settings)
    return _run("uninstall", host, settings, project, dry_run, commands, user_home, [], False)


def _run(
    action: str,
    host: str,
    settings: Settings,
    project: Path | None,
    dry_run: bool,
    commands: Commands,
    user_home: Path | None,
    notes: list[str],
    all_events: bool,
) -> Report:
    if host not in HOSTS:
        raise ValueError(f"unknown host {host!r}; known: {', '.join(HOSTS)}")
    root = project if project is not None else (user_home or Path.home())
    artifacts = HOSTS[host].artifacts(
        root,
        project=project is not None,
        commands=commands,
        language=settings.language,
        all_events=all_events,
    )
    backups = Backups(settings.home / "install")
    apply = _install if action == "install" else _uninstall
    files = apply(artifacts, backups, dry_run=dry_run)
    scope = "project" if project is not None else "user"
    return Report(host, scope, root, action, dry_run, files, backups.folder, notes)


def installed_in(host: str, root: Path, settings: Settings, *, project: bool) -> list[Path]:
    """The files of ``host`` for ``root`` that hold memvault's hooks or MCP server."""
    artifacts = HOSTS[host].artifacts(
        root,
        project=project,
        commands=Commands.find(settings),
        language=settings.language,
        all_events=True,
    )
    return [a.path for a in artifacts if a.role != "agent rules" and _holds_ours(a)]


def _holds_ours(artifact: Artifact) -> bool:
    try:
        data = artifact.path.read_bytes()
        return artifact.take(data).data != data
    except (OSError, ConfigError):  # unreadable: the install itself names it
        return False


def _refuse_a_second_scope(
    host: str, settings: Settings, project: Path | None, user_home: Path, cwd: Path
) -> None:
    name = NAMES[host]
    twice = "would run every hook twice per event and declare the MCP server twice"
    if project is not None:
        found = installed_in(host, user_home, settings, project=False)
        if found and project.resolve() != user_home.resolve():
            raise DoubleInstall(
                f"memvault is installed for {name} user-wide already ({_listed(found)}), which "
                f"covers {project}: installing it for the project too {twice}. Nothing was "
                f"changed. To install per project instead, first run `memvault install {host} "
                "--uninstall`."
            )
        return
    for folder in _projects_around(cwd, user_home):
        found = installed_in(host, folder, settings, project=True)
        if found:
            raise DoubleInstall(
                f"memvault is installed for {name} in the project {folder} already "
                f"({_listed(found)}): installing it user-wide too {twice} there. Nothing was "
                f"changed. Keep the project's install, or first run `memvault install {host} "
                f"--project {folder} --uninstall`."
            )


def _projects_around(cwd: Path, user_home: Path) -> list[Path]:
    """``cwd`` and the folders above it, short of the user's home and the root: where a
    project install that applies here would be."""
    home = user_home.resolve()
    folders = []
    for folder in [cwd.resolve(), *cwd.resolve().parents]:
        if folder == home or folder.parent == folder:
            break
        folders.append(folder)
    return folders


def _listed(paths: list[Path]) -> str:
    return ", ".join(str(p) for p in paths)


def _event_notes(host: str, all_events: bool) -> list[str]:
    if all_events:
        return [
            f"Registered every hook event memvault uses, the newer ones too: a {NAMES[host]} "
            "build that does not know one of them ignores the whole file. For such a build, "
            "install again with --stable-events."
        ]
    if host == cursor.HOST:
        newer = "session start and end (the memory block at session start), tool failures"
        newer += ", subagents and compaction"
        since = "every Cursor build since 1.7 knows"
    else:
        newer = "tool failures and subagent starts"
        since = "every Claude Code build since 2025 knows"
    return [
        f"Registered only the hook events {since}. If yours is current, install again "
        f"with --all-events to record {newer} as well."
    ]


# Each host by the name its users know it by.
NAMES = {cursor.HOST: "Cursor", claude_code.HOST: "Claude Code"}


def _pin_notes(commands: Commands) -> list[str]:
    if not commands.pinned:
        return []
    pinned = ", ".join(f"{name}={value}" for name, value in commands.pinned)
    notes = [
        f"Pinned from this environment, for an editor started from the desktop: {pinned}. "
        "Install again after changing them."
    ]
    if commands.hook_pins_dropped:
        names = " and ".join(commands.hook_pins_dropped)
        setx = "; ".join(
            printed_command(("setx", name, value), CMD)
            for name, value in commands.pinned
            if name in commands.hook_pins_dropped
        )
        notes.append(
            f"On Windows a hook's command line cannot set {names}: set them as user "
            f"environment variables (in a Command Prompt: {setx}) and restart the editor."
        )
    return notes


def _portable_notes(commands: Commands, settings: Settings) -> list[str]:
    notes = []
    if not commands.on_path:
        notes.append(
            f"The project's files run `{commands.hook}` and `{commands.memvault}` by name, "
            "and they are not on this PATH: put them there (`make install` links them into "
            "~/.local/bin), or the editor cannot start them."
        )
    left_out = Commands.find(settings).pinned
    if left_out:
        settings = ", ".join(f"{name}={value}" for name, value in left_out)
        notes.append(
            f"Not written into the project's files, which others share: {settings}. Set them "
            "in the environment the editor starts with."
        )
    return notes


def _install_notes(host: str, project: Path | None) -> list[str]:
    if host == cursor.HOST:
        notes = ["Cursor picks up hooks.json changes by itself; MCP servers may need a reload."]
        if project is None:
            notes.append(
                "Cursor keeps user rules in its settings (Cursor Settings → Rules), not in a "
                "file: paste the output of `memvault install cursor --print-rules` there, or "
                "install for a project with --project DIR."
            )
        else:
            notes.append(
                "Project hooks run only in a trusted workspace, and Cursor asks before it "
                "starts a project's MCP server."
            )
        return notes
    notes = ["Claude Code reads these at session start: start a new session to use them."]
    if project is not None:
        notes.append(
            "Claude Code asks once before it starts the server in the project's .mcp.json."
        )
    return notes
