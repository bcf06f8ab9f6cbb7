"""``memvault install cursor|claude-code``: connect an editor's agent to memvault."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from memvault.cli import reach
from memvault.install import ConfigError, Report, install, rules, uninstall
from memvault.platforms import CMD, POSIX, printed_command

console = Console(soft_wrap=True, highlight=False)
errors = Console(stderr=True, soft_wrap=True, highlight=False)
install_app = typer.Typer(
    help="Connect Cursor or Claude Code to memvault: hooks, the MCP server, agent rules.",
    no_args_is_help=True,
)

Project = Annotated[
    Path | None,
    typer.Option(
        "--project",
        help="Install for this project folder instead of for your user.",
        exists=True,
        file_okay=False,
        resolve_path=True,
    ),
]
Uninstall = Annotated[
    bool, typer.Option("--uninstall", help="Take memvault out again, restoring your files.")
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show what would change; write nothing.")]
Json = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
AllEvents = Annotated[
    bool | None,
    typer.Option(
        "--all-events/--stable-events",
        help="Register every hook event memvault uses, or only those older host builds know "
        "too (an older build ignores a whole hooks file naming an event it does not know). "
        "Default: all for Cursor, stable for Claude Code.",
        show_default=False,
    ),
]
PrintRules = Annotated[
    bool, typer.Option("--print-rules", help="Print the agent rules text and exit.")
]


def _host_command(host: str, described: str) -> None:
    """``memvault install <host>``: every host takes the same options."""

    def command(
        project: Project = None,
        remove: Uninstall = False,
        dry_run: DryRun = False,
        as_json: Json = False,
        print_rules: PrintRules = False,
        all_events: AllEvents = None,
    ) -> None:
        _run(host, project, remove, dry_run, as_json, print_rules, all_events)

    command.__doc__ = described
    install_app.command(host)(command)


_host_command("cursor", "Cursor: hooks.json, mcp.json and (for a project) the rule memvault.mdc.")
_host_command(
    "claude-code", "Claude Code: settings.json hooks, the MCP server, and the rules in CLAUDE.md."
)


def _run(
    host: str,
    project: Path | None,
    remove: bool,
    dry_run: bool,
    as_json: bool,
    print_rules: bool,
    all_events: bool | None,
) -> None:
    settings = reach.settings()
    if print_rules:
        typer.echo(rules.render(settings.language), nl=False)
        return
    try:
        if remove:
            report = uninstall(host, settings=settings, project=project, dry_run=dry_run)
        else:
            report = install(
                host, settings=settings, project=project, dry_run=dry_run, all_events=all_events
            )
    except ConfigError as exc:
        errors.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2) from None
    if as_json:
        console.print_json(json.dumps(report.to_dict(), ensure_ascii=False))
        return
    _show(report)


_WORDS = {
    "created": ("created", "would create"),
    "updated": ("updated", "would update"),
    "unchanged": ("unchanged", "unchanged"),
    "restored": ("restored", "would restore"),
    "removed": ("removed", "would remove"),
    "stripped": ("cleaned", "would clean"),
    "absent": ("absent", "absent"),
}


def _show(report: Report) -> None:
    verb = "uninstall" if report.action == "uninstall" else "install"
    dry = " (dry run: nothing written)" if report.dry_run else ""
    console.print(f"memvault {verb} {report.host}, {report.scope} scope{dry}")
    width = max(len(_WORDS[o.action][report.dry_run]) for o in report.files)
    for outcome in report.files:
        word = _WORDS[outcome.action][report.dry_run]
        line = f"  {word:<{width}}  {escape(str(outcome.path))}  [dim]{outcome.role}[/]"
        if outcome.detail:
            line += f": {escape(outcome.detail)}"
        console.print(line)
        for change in outcome.diff.splitlines():
            style = {"+": "green", "-": "red", "@": "cyan"}.get(change[:1], "")
            console.print(change, style=style, markup=False, highlight=False, soft_wrap=True)
    for note in report.notes:
        console.print(f"[dim]note:[/] {escape(note)}")
    if report.action == "install" and report.changed and not report.dry_run:
        shell = CMD if sys.platform == "win32" else POSIX  # the line is pasted there
        root = printed_command([str(report.root)], shell)
        scope = f" --project {root}" if report.scope == "project" else ""
        console.print(
            f"Originals kept in {escape(str(report.backups))}; undo with "
            f"`memvault install {report.host}{escape(scope)} --uninstall`."
        )
