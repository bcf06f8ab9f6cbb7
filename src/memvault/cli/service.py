"""``memvault service install|uninstall`` and ``memvault logs``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Annotated

import typer
from rich.console import Console

from memvault import service
from memvault.cli import reach
from memvault.install.commands import Commands, pins
from memvault.platforms import CMD, POSIX, printed_command

service_app = typer.Typer(
    help="Run the server at login (a systemd user unit, a launchd agent, a Windows logon "
    "task), or stop doing so.",
    no_args_is_help=True,
)
console = Console(highlight=False, soft_wrap=True)
errors = Console(stderr=True, highlight=False, soft_wrap=True)

DryRun = Annotated[bool, typer.Option("--dry-run", help="Say what would change; change nothing.")]


def _service() -> service.Service:
    chosen = reach.settings()
    memvault = Commands.find(chosen).memvault
    if not os.path.isabs(memvault):
        errors.print(
            "[red]cannot find the memvault executable[/]: a service needs its absolute path. "
            "Run this with the memvault you installed (for example ~/.local/bin/memvault)."
        )
        raise typer.Exit(1)
    try:
        return service.service_for(memvault, chosen.home, pins(chosen))
    except service.ServiceError as exc:
        errors.print(f"[red]{exc}[/]", markup=False)
        raise typer.Exit(1) from None


@service_app.command("install")
def install(dry_run: DryRun = False) -> None:
    """Write the service that runs `memvault serve` at login and start it."""
    chosen = _service()
    _report(lambda: service.install(chosen, dry_run=dry_run), chosen)
    if dry_run and chosen.path is not None:
        console.print(chosen.content.decode(), markup=False, end="")


@service_app.command("uninstall")
def uninstall(dry_run: DryRun = False) -> None:
    """Stop and disable the service, and remove the file `install` wrote."""
    chosen = _service()
    _report(lambda: service.uninstall(chosen, dry_run=dry_run), chosen)


def _report(run: Callable[[], service.Outcome], chosen: service.Service) -> None:
    try:
        outcome = run()
    except service.ServiceError as exc:
        errors.print(str(exc), style="red", markup=False)
        raise typer.Exit(1) from None
    for line in outcome.lines:
        (console if outcome.ok else errors).print(line, markup=False)
    if outcome.to_run:
        console.print(outcome.why_to_run, markup=False)
    for command in outcome.to_run:
        console.print(f"  {_shell(command, chosen.platform)}", markup=False)
    if not outcome.ok:
        raise typer.Exit(1)


def _shell(command: service.Command, platform: str) -> str:
    return printed_command(command, CMD if platform == "windows" else POSIX)


def logs(
    lines: Annotated[int, typer.Option("-n", "--lines", min=0, help="How many lines.")] = 50,
    follow: Annotated[
        bool, typer.Option("-f", "--follow", help="Keep printing what is appended.")
    ] = False,
) -> None:
    """Show the end of the server's log ($MEMVAULT_HOME/logs/server.log)."""
    log = service.log_path(reach.settings().home)
    if not service.log_files(log) and not follow:
        errors.print(
            f"no server log yet at {log}: a server started in the background or by "
            "`memvault service install` writes it (`memvault serve` in a terminal prints "
            "there instead)",
            markup=False,
        )
        _journal_note()
        raise typer.Exit(1)
    for line in service.last_lines(log, lines):
        sys.stdout.write(line + "\n")
    sys.stdout.flush()
    _journal_note()
    if not follow:
        return
    try:
        for text in service.follow(log):
            sys.stdout.write(text)
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass


def _journal_note() -> None:
    """Under systemd, the unit's own messages (started, crashed, restarted) are in the
    journal, not the log."""
    if service.current_platform() == "linux" and service.unit_path().is_file():
        errors.print(
            f"the service's own messages: journalctl --user -u {service.UNIT_NAME}",
            markup=False,
        )
