"""``memvault export`` and ``memvault import memvault``: all memory to one archive file and
back (docs/export.md), streamed from and to the running server when one runs for this
memory, read and written in this process only when none does."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import IO, Annotated, Any

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

from memvault.archive.report import OUTCOMES
from memvault.cli import remote
from memvault.cli.reach import errors, open_memory, server

console = Console(soft_wrap=True)
PROBLEMS_SHOWN = 20
REDRAW_EVERY = 500  # records between progress updates
CHUNK_BYTES = 64 * 1024  # an archive is sent to the server this much at a time


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
    running = server()
    if running is not None:
        _export_from(running, output, events)
        return
    from memvault.archive import Export, file_name

    with open_memory() as memory:
        archive = Export(memory, events=events)
        if output == "-":
            archive.write(sys.stdout.buffer)
            sys.stdout.buffer.flush()
            _warn_unreadable(archive.unreadable)
            return
        target = Path(output or file_name(archive.exported_at)).expanduser()
        total = memory.reads.stats().events if events else None
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
    _exported(target, dict(archive.counts), events)
    _warn_unreadable(archive.unreadable)


def _export_from(running: remote.Server, output: str | None, events: bool) -> None:
    """The server's ``GET /export``, streamed to ``output`` as it arrives."""
    import httpx

    headers = {"Authorization": f"Bearer {running.secret}"} if running.secret else {}
    url = f"{running.url}/agentmemory/export"
    params = {"includeEvents": "true" if events else "false"}
    timeout = httpx.Timeout(remote.LONG_SECONDS, connect=remote.PROBE_SECONDS * 4)
    total = running.get("/health")["store"]["events"] if events else None
    end: dict[str, Any] = {}
    with httpx.stream("GET", url, params=params, headers=headers, timeout=timeout) as answer:
        if answer.status_code != 200:
            answer.read()
            raise remote.ServerRefused(running.url, answer.status_code, _error_of(answer.content))
        if output == "-":
            for line in _lines(answer.iter_bytes()):
                sys.stdout.buffer.write(line)
                end = _end_record(line) or end
            sys.stdout.buffer.flush()
            _warn_unreadable(end.get("unreadable", []))
            return
        named = answer.headers.get("content-disposition", "").partition('filename="')[2]
        target = Path(output or named.rstrip('"') or "memvault-export.ndjson").expanduser()
        try:
            with _atomic_file(target) as out, _export_bar(total) as (bar, task):
                done = shown_events = 0
                for line in _lines(answer.iter_bytes()):
                    out.write(line)
                    done += 1
                    shown_events += line.startswith(b'{"kind":"event"')
                    end = _end_record(line) or end
                    if done % REDRAW_EVERY == 0:
                        bar.update(task, completed=shown_events, records=done)
                bar.update(task, completed=shown_events, records=done)
        except OSError as exc:
            errors.print(f"[red]could not write {escape(str(target))}[/]: {escape(str(exc))}")
            raise typer.Exit(1) from None
    _exported(target, end.get("records", {}), events)
    _warn_unreadable(end.get("unreadable", []))


def _lines(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Whole lines (each with its newline) from chunks cut anywhere."""
    rest = b""
    for chunk in chunks:
        rest += chunk
        *whole, rest = rest.split(b"\n")
        for line in whole:
            yield line + b"\n"
    if rest:
        yield rest


def _end_record(line: bytes) -> dict[str, Any] | None:
    if not line.startswith(b'{"kind":"end"'):
        return None
    return json.loads(line)


def _error_of(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        return " ".join(body.decode("utf-8", "replace").split())[:300] or "no detail"


def _exported(target: Path, counts: dict[str, int], events: bool) -> None:
    table = Table(title=f"exported to {escape(str(target))}", show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for kind in ("session", "event", "fragment", "board", "snapshot"):
        if kind != "event" or events:
            table.add_row(f"{kind}s", f"{counts.get(kind, 0):,}")
    table.add_row("size", f"{target.stat().st_size:,} bytes")
    console.print(table)


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
    size = path.stat().st_size if path is not None else None
    running = server()
    with (
        _source(path) as stream,
        Progress(
            TextColumn("importing", style="bold"),
            BarColumn(),
            DownloadColumn(),
            TimeElapsedColumn(),
            console=errors,
            disable=as_json,
        ) as bar,
    ):
        task = bar.add_task("import", total=size)
        if running is not None:
            report = _import_to(running, stream, strategy.value, bar, task)
        else:
            report = _import_here(stream, strategy.value, bar, task)
        bar.update(task, completed=size)
    if as_json:
        console.print_json(json.dumps(report, ensure_ascii=False))
        return
    console.print(_summary(report))
    if report["problems"]:
        console.print(_problems(report))
    if report["summariesQueued"]:
        console.print(
            f"{report['summariesQueued']:,} session(s) queued for summaries: a running server "
            "derives them, or run `memvault worker --once`."
        )


def _import_here(stream: IO[bytes], strategy: str, bar: Progress, task: Any) -> dict[str, Any]:
    from memvault.archive import ArchiveError, import_stream

    with open_memory() as memory:
        try:
            report = import_stream(
                memory,
                stream,
                strategy=strategy,
                progress=lambda done: bar.update(task, completed=done),
            )
        except ArchiveError as exc:
            bar.stop()
            errors.print(f"[red]not imported[/]: {escape(exc.message)}")
            raise typer.Exit(2) from None
    return report.to_dict()


def _import_to(
    running: remote.Server, stream: IO[bytes], strategy: str, bar: Progress, task: Any
) -> dict[str, Any]:
    """The archive sent to the server's ``POST /import/archive`` as it is read."""
    import httpx

    def chunks() -> Iterator[bytes]:
        sent = 0
        while chunk := stream.read(CHUNK_BYTES):
            sent += len(chunk)
            bar.update(task, completed=sent)
            yield chunk

    headers = {"Content-Type": "application/x-ndjson"}
    if running.secret:
        headers["Authorization"] = f"Bearer {running.secret}"
    answer = httpx.post(
        f"{running.url}/agentmemory/import/archive",
        params={"strategy": strategy},
        content=chunks(),
        headers=headers,
        timeout=httpx.Timeout(remote.LONG_SECONDS, connect=remote.PROBE_SECONDS * 4),
    )
    if answer.status_code == 400:
        bar.stop()
        errors.print(f"[red]not imported[/]: {escape(_error_of(answer.content))}")
        raise typer.Exit(2)
    if answer.status_code != 200:
        raise remote.ServerRefused(running.url, answer.status_code, _error_of(answer.content))
    return answer.json()


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


def _warn_unreadable(unreadable: list[str]) -> None:
    for path in unreadable:
        errors.print(f"[yellow]left out[/] {escape(path)}: not UTF-8 text")


def _summary(report: dict[str, Any]) -> Table:
    table = Table(
        "kind",
        *OUTCOMES,
        title=f"{report['source']} {report['version']} import ({report['strategy']})",
    )
    for kind, values in report["counts"].items():
        table.add_row(kind, *(f"{values[name]:,}" if values[name] else "" for name in OUTCOMES))
    for reason, count in report["skipped"].items():
        table.add_row(f"  skipped: {escape(reason)}", *[""] * 4, f"{count:,}", "", style="dim")
    return table


def _problems(report: dict[str, Any]) -> Table:
    table = Table("where", "kind", "problem", title="Problems")
    for problem in report["problems"][:PROBLEMS_SHOWN]:
        line = problem.get("line")
        where = f"line {line}" if line is not None else problem.get("item") or ""
        table.add_row(escape(where), problem["kind"], escape(problem["error"]))
    if report["problemCount"] > PROBLEMS_SHOWN:
        more = report["problemCount"] - PROBLEMS_SHOWN
        table.caption = f"and {more:,} more; --json lists them"
    return table
