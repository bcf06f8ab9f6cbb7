"""Keeping the server running at login, and reading its log.

``memvault service install`` writes a systemd user unit on Linux and a launchd agent on
macOS that run ``memvault serve`` at login and again after a crash, with its output
appended to ``$MEMVAULT_HOME/logs/server.log`` (the log a detached server writes too). The
settings an editor's config pins (``MEMVAULT_HOME``, ``MEMVAULT_URL``, ``MEMVAULT_VAULT``,
see ``memvault.install.commands.pins``) are pinned in the service the same way, since a
service manager does not see the shell's environment either. On Windows nothing is
written: the commands to paste into a Command Prompt are printed instead, ``setx`` for
each pinned setting (a logon task runs with the user's environment variables) and
``schtasks`` for the task itself.

A service file is memvault's own: written whole, byte-identical on a re-run, and removed
by ``uninstall`` only when it is recognisably the one ``install`` wrote.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import plistlib
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from memvault.install.files import write_atomically

if TYPE_CHECKING:
    import threading

UNIT_NAME = "memvault.service"
LAUNCHD_LABEL = "dev.memvault.server"
TASK_NAME = "memvault"
TASK_COMMAND_LIMIT = 261  # characters schtasks takes after /TR
LOG_FILE = Path("logs") / "server.log"
ROTATED_KEPT = 3  # server.log.1 … server.log.3
# The unit's first line: what makes a file at the unit's path memvault's to remove.
UNIT_MARK = "# Written by `memvault service install`; `memvault service uninstall` removes it."

Command = tuple[str, ...]


class ServiceError(Exception):
    """A service cannot be written or removed; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Service:
    """What ``install`` writes for this platform, and the commands that load and unload it."""

    platform: str  # linux | macos | windows
    path: Path | None  # None on Windows: nothing is written there
    content: bytes
    load: tuple[Command, ...]  # run after writing a changed file
    start: tuple[Command, ...]  # run on every install (idempotent)
    unload: tuple[Command, ...]  # run before removing it
    after_remove: tuple[Command, ...] = ()
    can_run: bool = False  # whether the service manager is there to run the commands
    log: Path = field(default_factory=Path)
    folders: tuple[Path, ...] = ()  # made for the file if missing, innermost first
    links: tuple[Path, ...] = ()  # what enabling it makes, removed with it
    is_loaded: Command | None = None  # answers 0 when the service is loaded already
    stop_elsewhere: tuple[Command, ...] = ()  # for the user, where the manager runs

    def is_ours(self, data: bytes) -> bool:
        """Whether ``data`` (the file now at ``path``) is one ``install`` wrote."""
        if self.platform == "linux":
            return data.startswith(UNIT_MARK.encode())
        try:
            return plistlib.loads(data).get("Label") == LAUNCHD_LABEL
        except Exception:  # not a plist at all: someone else's file
            return False


@dataclass(slots=True)
class Outcome:
    """What ``install``/``uninstall`` did, line by line, and the commands left to the user."""

    lines: list[str] = field(default_factory=list)
    to_run: list[Command] = field(default_factory=list)
    why_to_run: str = ""  # what the user is to do with ``to_run``
    ok: bool = True


def log_path(home: str | os.PathLike[str]) -> Path:
    return Path(os.path.abspath(home)) / LOG_FILE


def unit_path(user_home: Path | None = None) -> Path:
    """Where the systemd user unit goes."""
    return (user_home or Path.home()) / ".config" / "systemd" / "user" / UNIT_NAME


def service_for(
    memvault: str,
    home: str | os.PathLike[str],
    pinned: Sequence[tuple[str, str]],
    *,
    platform: str | None = None,
    user_home: Path | None = None,
    uid: int | None = None,
) -> Service:
    """The service for ``platform`` (this one by default) that runs ``memvault serve``
    with ``pinned`` in its environment."""
    platform = platform or current_platform()
    user_home = user_home or Path.home()
    log = log_path(home)
    for name, value in pinned:
        if "\n" in value or "\r" in value or "\0" in value:
            raise ServiceError(f"{name} holds a line break or NUL, which no service file can hold")
    if platform == "linux":
        if any(c in memvault for c in "\"'\\") or not memvault.isprintable():
            # systemd refuses such an executable ("contains special characters").
            raise ServiceError(
                f"systemd does not run a program whose path holds a quote, a backslash or a "
                f"control character: {memvault!r}; install memvault in another folder"
            )
        unit = UNIT_NAME
        wants = unit_path(user_home).parent / "default.target.wants"
        return Service(
            "linux",
            unit_path(user_home),
            systemd_unit(memvault, pinned, log).encode(),
            load=(("systemctl", "--user", "daemon-reload"),),
            start=(("systemctl", "--user", "enable", "--now", unit),),
            unload=(("systemctl", "--user", "disable", "--now", unit),),
            after_remove=(("systemctl", "--user", "daemon-reload"),),
            can_run=_systemd_user_session(),
            log=log,
            folders=(wants, *unit_path(user_home).parents[:3]),  # user, systemd, .config
            links=(wants / UNIT_NAME,),
            stop_elsewhere=(("systemctl", "--user", "stop", unit),),
        )
    if platform == "macos":
        path = user_home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
        domain = f"gui/{os.getuid() if uid is None else uid}"
        return Service(
            "macos",
            path,
            launchd_plist(memvault, pinned, log),
            # A changed agent is unloaded first: bootstrap refuses one already loaded.
            load=(("launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"),),
            start=(("launchctl", "bootstrap", domain, str(path)),),
            unload=(("launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"),),
            can_run=shutil.which("launchctl") is not None,
            log=log,
            is_loaded=("launchctl", "print", f"{domain}/{LAUNCHD_LABEL}"),
            stop_elsewhere=(("launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"),),
        )
    setx = (("setx", name, value) for name, value in pinned)  # a task reads them at logon
    return Service(
        "windows",
        None,
        b"",
        load=(),
        start=(*setx, windows_task(memvault, log), ("schtasks", "/Run", "/TN", TASK_NAME)),
        unload=(("schtasks", "/Delete", "/TN", TASK_NAME, "/F"),),
        log=log,
    )


def current_platform() -> str:
    if sys.platform == "darwin":
        return "macos"
    if sys.platform == "win32":
        return "windows"
    return "linux"


# -- the files --------------------------------------------------------------------------


def systemd_unit(memvault: str, pinned: Sequence[tuple[str, str]], log: Path) -> str:
    """A systemd user unit running ``memvault serve`` at login, restarted after a failure."""
    environment = "".join(
        f"Environment={_unit_quote(f'{name}={value}')}\n" for name, value in pinned
    )
    output = _unit_specifiers(str(log))
    return (
        f"{UNIT_MARK}\n"
        "[Unit]\n"
        "Description=memvault memory server for AI coding agents\n"
        "\n"
        "[Service]\n"
        "Type=exec\n"
        f"ExecStart={_unit_quote(memvault)} serve\n"
        f"{environment}"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        f"StandardOutput=append:{output}\n"
        f"StandardError=append:{output}\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def launchd_plist(memvault: str, pinned: Sequence[tuple[str, str]], log: Path) -> bytes:
    """A launchd agent running ``memvault serve`` at login, restarted when it did not exit
    cleanly."""
    agent: dict[str, object] = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": [memvault, "serve"],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": str(log),
        "StandardErrorPath": str(log),
        "ProcessType": "Background",
    }
    if pinned:
        agent["EnvironmentVariables"] = dict(pinned)
    return plistlib.dumps(agent, sort_keys=True)


def windows_task(memvault: str, log: Path) -> Command:
    """The Task Scheduler command running ``memvault serve`` at logon, appending to the log
    through ``cmd``; ``ServiceError`` when a path holds what ``cmd`` expands even in quotes
    (``%``), or the command is longer than schtasks takes."""
    run = f'cmd /c ""{memvault}" serve >> "{log}" 2>&1"'
    if "%" in run or run.count('"') != 6:
        problem = "a % or a double quote in a path: cmd would read it otherwise"
    elif len(run) > TASK_COMMAND_LIMIT:
        problem = f"{len(run)} characters, and schtasks takes {TASK_COMMAND_LIMIT}"
    else:
        return ("schtasks", "/Create", "/TN", TASK_NAME, "/SC", "ONLOGON", "/TR", run, "/F")
    raise ServiceError(
        f"cannot make the logon task's command ({problem}): install memvault, or set "
        f"MEMVAULT_HOME, in another folder; the command was: {run}"
    )


def _unit_specifiers(text: str) -> str:
    return text.replace("%", "%%")


def _unit_quote(text: str) -> str:
    """One word of a unit file, in double quotes with its escapes; ``%`` is a specifier
    everywhere. (A ``$`` is expanded only in a command's arguments, and the executable's
    path is taken as it is: systemd-analyze finds the file then.)"""
    text = _unit_specifiers(text.replace("\\", "\\\\").replace('"', '\\"'))
    return f'"{text}"'


def _systemd_user_session() -> bool:
    """Whether a systemd user manager answers (not in a container, a plain ssh login
    without lingering, or a machine without systemd)."""
    if shutil.which("systemctl") is None:
        return False
    try:
        done = subprocess.run(
            ["systemctl", "--user", "show-environment"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


# -- install and uninstall ----------------------------------------------------------------


def install(service: Service, *, dry_run: bool = False) -> Outcome:
    """Write the service (unless it is there already, byte for byte) and start it, or say
    what to run when the service manager is not there."""
    if service.path is None:
        if not dry_run:  # memvault's own folder, which cmd's >> does not make
            with contextlib.suppress(OSError):
                service.log.parent.mkdir(parents=True, exist_ok=True)
        return Outcome(
            ["nothing was installed: on Windows, Task Scheduler runs the server"],
            list(service.start),
            "in a Command Prompt (cmd.exe), set what it reads, create its logon task and start it:",
        )
    outcome = Outcome()
    current = _current(service.path)
    if current is not None and current != service.content and not service.is_ours(current):
        raise ServiceError(
            f"{service.path} exists and was not written by memvault: move it away, or "
            "keep it and leave memvault's service out"
        )
    changed = current != service.content
    verb = "would write" if dry_run else "wrote"
    outcome.lines.append(f"{verb} {service.path}" if changed else f"unchanged {service.path}")
    commands = [*(service.load if changed else ()), *service.start]
    if dry_run:
        outcome.why_to_run = "and run:" if service.can_run else _elsewhere(service)
        outcome.to_run.extend(commands)
        return outcome
    if not changed and _answers(service.is_loaded if service.can_run else None):
        outcome.lines.append("it is loaded already")
        return outcome
    if changed:
        try:
            service.log.parent.mkdir(parents=True, exist_ok=True)
            service.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(service.path, service.content, None)
        except OSError as exc:
            raise ServiceError(f"cannot write {service.path}: {exc.strerror}") from None
    # launchctl's bootout before a bootstrap fails when nothing was loaded, as it should.
    _run_or_tell(service, commands, outcome, tolerate=service.unload)
    if outcome.ok and service.can_run:
        outcome.lines.append(f"the server runs at login; its log is {service.log}")
    return outcome


def _current(path: Path) -> bytes | None:
    """The service file as it is; None when it is not there."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ServiceError(f"cannot read {path}: {exc.strerror}") from None


def uninstall(service: Service, *, dry_run: bool = False) -> Outcome:
    """Stop and disable the service, then remove the file ``install`` wrote (only that)."""
    if service.path is None:
        return Outcome(
            ["nothing was installed on Windows"],
            list(service.unload),
            "remove the logon task, if you created it, in a Command Prompt (cmd.exe):",
        )
    outcome = Outcome()
    current = _current(service.path)
    if current is None:
        outcome.lines.append(f"nothing to remove: {service.path} is not there")
        return outcome
    if not service.is_ours(current):
        raise ServiceError(f"{service.path} was not written by memvault: left as it is")
    verb = "would remove" if dry_run else "removed"
    unload = service.unload if service.can_run else ()
    if dry_run:
        outcome.lines.append(f"{verb} {service.path}")
        if service.can_run:
            outcome.why_to_run = "and run:"
            outcome.to_run.extend([*unload, *service.after_remove])
        return outcome
    # Stopping a service that is not loaded fails, and is what uninstall wants anyway.
    _run_or_tell(service, list(unload), outcome, tolerate=service.unload)
    try:
        service.path.unlink(missing_ok=True)
        for link in service.links:  # enabling it linked to the file: nothing else's
            if link.is_symlink() and Path(os.readlink(link)) == service.path:
                link.unlink()
    except OSError as exc:
        raise ServiceError(f"cannot remove {service.path}: {exc.strerror}") from None
    outcome.lines.append(f"{verb} {service.path}")
    for folder in service.folders:  # the folders install made for it, when left empty
        try:
            folder.rmdir()
        except FileNotFoundError:
            continue
        except OSError:
            break
    if service.can_run:
        _run_or_tell(service, list(service.after_remove), outcome)
    else:
        outcome.why_to_run = "if it runs in your login session, stop it there:"
        outcome.to_run.extend([*service.stop_elsewhere, *service.after_remove])
    return outcome


def _answers(command: Command | None) -> bool:
    if command is None:
        return False
    try:
        return subprocess.run(command, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _elsewhere(service: Service) -> str:
    manager = "systemd user session" if service.platform == "linux" else "launchctl"
    return f"no {manager} here: run these in your login session:"


def _run_or_tell(
    service: Service,
    commands: list[Command],
    outcome: Outcome,
    *,
    tolerate: Sequence[Command] = (),
) -> None:
    if not service.can_run:
        if commands:
            outcome.why_to_run = _elsewhere(service)
            outcome.to_run.extend(commands)
        return
    for command in commands:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            outcome.ok = False
            outcome.lines.append(f"`{' '.join(command)}` could not run: {exc}")
            outcome.to_run.append(command)
            continue
        if done.returncode != 0 and command not in tolerate:
            outcome.ok = False
            said = (done.stderr or done.stdout).strip()
            outcome.lines.append(f"`{' '.join(command)}` failed ({done.returncode}): {said}")


# -- the log -----------------------------------------------------------------------------


def log_files(log: Path) -> list[Path]:
    """The log and its rotated copies, newest first, those that exist."""
    candidates = [log, *(log.with_name(f"{log.name}.{n}") for n in range(1, ROTATED_KEPT + 1))]
    return [path for path in candidates if path.is_file()]


def last_lines(log: Path, count: int) -> list[str]:
    """The last ``count`` lines of the log, reaching into the rotated copies when the log
    itself (just rotated) holds fewer."""
    lines: list[str] = []
    for path in log_files(log):
        if len(lines) >= count:
            break
        lines = _tail(path, count - len(lines)) + lines
    return lines


def _tail(path: Path, count: int, block: int = 64 * 1024) -> list[str]:
    """The last ``count`` lines of one file, read from its end (a log may be large)."""
    if count <= 0:
        return []
    try:
        with path.open("rb") as file:
            end = file.seek(0, os.SEEK_END)
            data = b""
            position = end
            while position > 0 and data.count(b"\n") <= count:
                position = max(0, position - block)
                file.seek(position)
                data = file.read(end - position)
    except FileNotFoundError:  # rotated away meanwhile
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[-count:]


def follow(log: Path, *, poll: float = 0.25, stop: threading.Event | None = None) -> Iterator[str]:
    """What is appended to the log from now on, as it comes. When the log is rotated (a new
    file at its path), the rest of the old file, then the new one from its start. Runs
    until the caller stops iterating, or ``stop`` is set."""
    file: BinaryIO | None = None
    identity: tuple[int, int] | None = None
    decoder = _decoder()
    from_end = True  # the first file from its end: its last lines were shown already
    try:
        while stop is None or not stop.is_set():
            if file is None:
                try:
                    file = log.open("rb")
                except FileNotFoundError:
                    from_end = False  # a log that appears later is all new
                    time.sleep(poll)
                    continue
                if from_end:
                    file.seek(0, os.SEEK_END)
                from_end = False
                opened = os.fstat(file.fileno())
                identity, decoder = (opened.st_dev, opened.st_ino), _decoder()
            chunk = file.read()
            if chunk:
                yield decoder.decode(chunk)
                continue
            try:
                now = os.stat(log)
            except FileNotFoundError:
                now = None
            if now is None or (now.st_dev, now.st_ino) != identity:
                rest = file.read()  # what was written just before the rotation
                tail = decoder.decode(rest, final=True)
                if tail:
                    yield tail
                file.close()
                file = None
                continue
            if now.st_size < file.tell():  # truncated in place: start again
                file.seek(0)
            time.sleep(poll)
    finally:
        if file is not None:
            file.close()


def _decoder() -> codecs.IncrementalDecoder:
    # A chunk may end inside a character: the decoder keeps its first bytes for the next.
    return codecs.getincrementaldecoder("utf-8")(errors="replace")
