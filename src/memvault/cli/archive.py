"""``memvault export`` and ``memvault import memvault``: all memory to one archive file and
back (docs/export.md)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from memvault.archive import ArchiveError, Export, ImportReport, file_name, import_stream
from memvault.archive.report import OUTCOMES
from memvault.cli.board import errors, open_memory

console = Console(soft_wrap=True)
PROBLEMS_SHOWN = 20
REDRAW_EVERY = 500  # records between progress updates


class Strategy(StrEnum):
    merge = "merge"
    skip = "skip"
    replace = "replace"


def export(
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            help="The file to write, or - for standard output "
            "(default: memvault-export-<time>.ndjson here).",
        ),
    ] = None,
    events: Annotated[
        bool, typer.Option("--events", help="Include the raw event log (it can be large).")
    ] = False,
) -> None:
    """Write all memory to one archive: sessions, the vault's fragments, board and
    snapshots, and with --events the raw events. Summaries, the graph and the index are
    derived again on import."""
    with open_memory() as memory:
        archive = Export(memory, events=events)
        if output == "-":
            archive.write(sys.stdout.buffer)
            sys.stdout.buffer.flush()
            _warn_unreadable(archive)
            return
        target = Path(output or file_name(archive.exported_at)).expanduser()
        total = memory.store.stats().events if events else None
        try:
            with _atomic_file(target) as out, _export_bar(total) as (bar, task):
                done = 0
                for line in archive.lines():
                    out.write(line)
                    done += 1
                    if done % REDRAW_EVERY == 0:
                        bar.update(task, completed=archive.counts["event"], records=done)
                bar.update(task, completed=archive.counts["event"], records=done)
        except OSError as exc:
            errors.print(f"[red]could not write {escape(str(target))}[/]: {escape(str(exc))}")
            raise typer.Exit(1) from None
    table = Table(title=f"exported to {escape(str(target))}", show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for kind in ("session", "event", "fragment", "board", "snapshot"):
        if kind != "event" or events:
            table.add_row(f"{kind}s", f"{archive.counts[kind]:,}")
    table.add_row("size", f"{target.stat().st_size:,} bytes")
    console.print(table)
    _warn_unreadable(archive)


def import_archive(
    file: Annotated[
        str,
        typer.Argument(
            help="An archive written by `memvault export`, or agentmemory's export (JSON); "
            "- for standard input."
        ),
    ],
    strategy: Annotated[
        Strategy,
        typer.Option(
            "--strategy",
            help="merge: add what is missing and merge near-duplicate fragments; skip: only "
            "add what is missing; replace: the archive's files overwrite the vault's.",
        ),
    ] = Strategy.merge,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Import an archive of `memvault export`, or agentmemory's export (told apart by
    content). Events already stored are never stored again; summaries are queued."""
    path = None if file == "-" else Path(file).expanduser()
    if path is not None and not path.is_file():
        errors.print(f"[red]no such file: {escape(file)}[/]")
        raise typer.Exit(2)
    with open_memory() as memory, _source(path) as stream:
        size = path.stat().st_size if path is not None else None
        try:
            with Progress(
                TextColumn("importing", style="bold"),
                BarColumn(),
                DownloadColumn(),
                TimeElapsedColumn(),
                console=errors,
                disable=as_json,
            ) as bar:
                task = bar.add_task("import", total=size)
                report = import_stream(
                    memory,
                    stream,
                    strategy=strategy.value,
                    progress=lambda done: bar.update(task, completed=done),
                )
                bar.update(task, completed=size)
        except ArchiveError as exc:
            errors.print(f"[red]not imported[/]: {escape(exc.message)}")
            raise typer.Exit(2) from None
    if as_json:
        console.print_json(json.dumps(report.to_dict(), ensure_ascii=False))
        return
    console.print(_summary(report))
    if report.problems:
        console.print(_problems(report))
    if report.summaries_queued:
        console.print(
            f"{report.summaries_queued:,} session(s) queued for summaries: a running server "
            "derives them, or run `memvault worker --once`."
        )


@contextlib.contextmanager
def _source(path: Path | None):
    if path is None:
        yield sys.stdin.buffer
        return
    with path.open("rb") as stream:
        yield stream


@contextlib.contextmanager
def _atomic_file(target: Path):
    """A file that appears at ``target`` whole, once everything is written, or not at all."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


@contextlib.contextmanager
def _export_bar(total: int | None):
    shown = "{task.completed:,} events  " if total is not None else ""
    with Progress(
        TextColumn("exporting", style="bold"),
        BarColumn(),
        TextColumn(shown + "{task.fields[records]:,} records"),
        TimeElapsedColumn(),
        console=errors,
    ) as bar:
        yield bar, bar.add_task("export", total=total, records=0)


def _warn_unreadable(archive: Export) -> None:
    for path in archive.unreadable:
        errors.print(f"[yellow]left out[/] {escape(path)}: not UTF-8 text")


def _summary(report: ImportReport) -> Table:
    table = Table(
        "kind",
        *OUTCOMES,
        title=f"{report.source} {report.version} import ({report.strategy})",
    )
    for kind, counts in report.counts.items():
        values = counts.to_dict()
        table.add_row(kind, *(f"{values[name]:,}" if values[name] else "" for name in OUTCOMES))
    for reason, count in report.reasons.most_common():
        table.add_row(f"  skipped: {escape(reason)}", *[""] * 4, f"{count:,}", "", style="dim")
    return table


def _problems(report: ImportReport) -> Table:
    table = Table("where", "kind", "problem", title="Problems")
    for problem in report.problems[:PROBLEMS_SHOWN]:
        where = f"line {problem.line}" if problem.line is not None else problem.item or ""
        table.add_row(escape(where), problem.kind, escape(problem.error))
    if report.problem_count > PROBLEMS_SHOWN:
        more = report.problem_count - PROBLEMS_SHOWN
        table.caption = f"and {more:,} more; --json lists them"
    return table
