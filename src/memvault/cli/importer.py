"""``memvault import cursor | claude-code``: past conversations from a host's local files;
``memvault import memvault``: an export archive (``memvault.cli.archive``).

The transcripts are read here (they are this machine's files); their events go to the
running server's ``/observe/bulk`` when one runs for this memory, the path live hooks
take, and into the memory opened in this process only when none does.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from memvault.cli import remote
from memvault.cli.archive import import_archive
from memvault.cli.reach import errors, open_memory, server
from memvault.importers import ImportReport, Transcript, claude_code, cursor, run_import

console = Console(soft_wrap=True)
import_app = typer.Typer(
    help="Import past conversations from a host's local transcripts, or an export archive "
    "(re-running is safe).",
    no_args_is_help=True,
)

Paths = Annotated[
    list[Path] | None,
    typer.Option(
        "--path",
        help="A transcript file or a folder to search (repeat); default: the host's own.",
    ),
]
Project = Annotated[
    str | None, typer.Option("--project", help="Use this project name for every event.")
]
Json = Annotated[bool, typer.Option("--json", help="Print the report as JSON, no progress.")]
ERRORS_SHOWN = 20

import_app.command("memvault")(import_archive)


@import_app.command("cursor")
def import_cursor(path: Paths = None, project: Project = None, as_json: Json = False) -> None:
    """Cursor: agent transcripts in ~/.cursor/projects and the IDE's state.vscdb."""
    paths = _existing(path, cursor.default_paths())
    _run("Cursor", paths, cursor.transcripts(paths, project=project), as_json)


@import_app.command("claude-code")
def import_claude_code(path: Paths = None, project: Project = None, as_json: Json = False) -> None:
    """Claude Code: the session transcripts in ~/.claude/projects."""
    paths = _existing(path, [claude_code.default_root()])
    found = [
        claude_code.transcript(file, project=project)
        for root in paths
        for file in claude_code.discover(root).files
    ]
    _run("Claude Code", paths, found, as_json)


def _existing(given: list[Path] | None, defaults: list[Path]) -> list[Path]:
    """The paths to read: those given (each must exist), or the defaults that exist."""
    if not given:
        return [p for p in defaults if p.exists()]
    paths = [p.expanduser() for p in given]
    missing = [p for p in paths if not p.exists()]
    if missing:
        errors.print(f"[red]no such file or folder: {escape(str(missing[0]))}[/]")
        raise typer.Exit(2)
    return paths


def _run(host: str, paths: list[Path], transcripts: list[Transcript], as_json: bool) -> None:
    if not transcripts and not as_json:
        where = ", ".join(str(p) for p in paths) or "its standard folders"
        console.print(f"no {host} transcripts found in {escape(where)}; pass --path to choose")
    running = server()
    with _Observer(running) if running is not None else open_memory() as memory:
        if as_json:
            report = run_import(memory, transcripts)
        else:
            with Progress(
                TextColumn("{task.description}", style="bold"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("files  {task.fields[lines]:,} lines"),
                TimeElapsedColumn(),
                TextColumn("{task.fields[file]}", style="dim"),
                console=errors,
                transient=False,
            ) as bar:
                report = run_import(memory, transcripts, progress=_Bar(bar, host, len(transcripts)))
    if as_json:
        shown = {"host": host, "paths": [str(p) for p in paths], **report.to_dict()}
        console.print_json(json.dumps(shown, ensure_ascii=False))
        return
    console.print(_summary(host, report))
    if report.errors:
        console.print(_errors(report))


class _Observer:
    """The server's ``/observe/bulk``, as the importer sends its batches to a memory."""

    def __init__(self, running: remote.Server) -> None:
        self.running = running

    def __enter__(self) -> _Observer:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def observe_many(self, batch: list[dict[str, Any]]) -> SimpleNamespace:
        answer = self.running.post(
            "/observe/bulk", {"observations": batch}, seconds=remote.LONG_SECONDS
        )
        problems = [
            SimpleNamespace(index=e["index"], event_id=e["eventId"], error=e["error"])
            for e in answer["errors"]
        ]
        return SimpleNamespace(
            total=answer["total"],
            imported=answer["imported"],
            deduplicated=answer["deduplicated"],
            errors=problems,
        )


class _Bar:
    """Import progress on a Rich bar: files done of found, lines read."""

    UPDATE_EVERY = 5_000  # lines: redrawing on every line would cost more than reading it

    def __init__(self, bar: Progress, host: str, files: int) -> None:
        self.bar = bar
        self.task = bar.add_task(f"importing {host}", total=files or 1, lines=0, file="")
        self.lines = 0
        self.unshown = 0

    def file_started(self, label: str) -> None:
        name = label.replace("\\", "/").rsplit("/", 1)[-1]
        self.bar.update(self.task, file=escape(name if len(name) <= 48 else f"…{name[-47:]}"))

    def lines_read(self, count: int) -> None:
        self.lines += count
        self.unshown += count
        if self.unshown >= self.UPDATE_EVERY:
            self.bar.update(self.task, lines=self.lines)
            self.unshown = 0

    def file_done(self) -> None:
        self.bar.update(self.task, advance=1, lines=self.lines)
        self.unshown = 0


def _summary(host: str, report: ImportReport) -> Table:
    table = Table(title=f"{host} import", show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_row("files", f"{report.files:,}")
    table.add_row("lines read", f"{report.lines:,}")
    table.add_row("events sent", f"{report.sent:,}")
    table.add_row("new events", f"[green]{report.new:,}[/]")
    table.add_row("duplicates", f"{report.duplicates:,}")
    table.add_row("sessions", f"{len(report.sessions):,}")
    table.add_row("skipped", f"{sum(report.skipped.values()):,}")
    for reason, count in report.skipped.most_common():
        table.add_row(f"  {escape(reason)}", f"{count:,}", style="dim")
    colour = "red" if report.error_count else "green"
    table.add_row("errors", f"[{colour}]{report.error_count:,}[/]")
    return table


def _errors(report: ImportReport) -> Table:
    table = Table("File", "Line", "Problem", title="Not imported")
    for problem in report.errors[:ERRORS_SHOWN]:
        table.add_row(escape(problem.file), str(problem.line or ""), escape(problem.error))
    if report.error_count > ERRORS_SHOWN:
        more = report.error_count - ERRORS_SHOWN
        table.caption = f"and {more:,} more; --json lists them"
    return table
