"""``memvault session …`` and ``memvault organize``: the session board from a terminal."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from memvault.api import views
from memvault.config import Settings
from memvault.errors import MemvaultError
from memvault.memory import Memory
from memvault.vault.board import format_references
from memvault.vault.board_files import BoardError
from memvault.vault.lifecycle import Report

console = Console()
errors = Console(stderr=True, soft_wrap=True)
session_app = typer.Typer(
    help="The session board in your vault (memory/index.md).", no_args_is_help=True
)

Json = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
Agent = Annotated[str | None, typer.Option("--agent", help="Agent name, e.g. cursor-main-agent.")]


def open_memory() -> Memory:
    try:
        return Memory.open(Settings())
    except MemvaultError as exc:
        errors.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2) from None


def _show(report: Report, as_json: bool) -> None:
    if as_json:
        console.print_json(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        (console if report.ok else errors).print(
            f"[{'green' if report.ok else 'red'}]{report.operation}[/]: {escape(report.message)}",
            highlight=False,
        )
        for key, value in report.details.items():
            if value not in ([], {}, None) and key != "dryRun":
                console.print(f"  {_words(key)}: {escape(_human(value))}", highlight=False)
    if not report.ok:
        raise typer.Exit(1)


def _words(key: str) -> str:
    """``keptActive`` → ``kept active``: a report's keys as a person reads them."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).lower()


def _human(value: object) -> str:
    """A report value as text: lists joined, mappings as ``a (b, c)``, yes and no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(_human(item) for item in value)
    if isinstance(value, dict):
        return "; ".join(f"{key} ({_human(item)})" for key, item in value.items())
    return str(value)


@session_app.command("register")
def register(
    manual: Annotated[bool, typer.Option("--manual", help="Active, with a snapshot.")] = False,
    topic: Annotated[str | None, typer.Option(help="What the session is about.")] = None,
    summary: Annotated[str | None, typer.Option(help="One or two sentences.")] = None,
    keywords: Annotated[str | None, typer.Option(help="Comma-separated keywords.")] = None,
    file: Annotated[
        Path | None, typer.Option("--file", help="Snapshot content (markdown).")
    ] = None,
    agent: Agent = None,
    as_json: Json = False,
) -> None:
    """Add a row for this session (idle; with --manual, active with a snapshot)."""
    content = file.read_text(encoding="utf-8") if file else None
    with open_memory() as memory:
        _show(
            memory.register_session(
                agent=agent,
                manual=manual,
                topic=topic,
                summary=summary,
                keywords=keywords,
                content=content,
            ),
            as_json,
        )


@session_app.command("update")
def update(
    session_id: Annotated[str, typer.Argument(help="The Memory Session ID to update.")],
    file: Annotated[
        Path | None, typer.Option("--file", help="Snapshot content (markdown).")
    ] = None,
    section: Annotated[
        list[str] | None,
        typer.Option("--section", help='"Section: text", e.g. "Decisions: use fetch prefix".'),
    ] = None,
    topic: Annotated[str | None, typer.Option(help="New topic.")] = None,
    summary: Annotated[str | None, typer.Option(help="New summary.")] = None,
    keywords: Annotated[str | None, typer.Option(help="New keywords.")] = None,
    as_json: Json = False,
) -> None:
    """Merge new content into the snapshot and update the row (promotes idle to active)."""
    if file and section:
        errors.print("[red]give --file or --section, not both[/]")
        raise typer.Exit(2)
    content: object = file.read_text(encoding="utf-8") if file else None
    if section:
        sections: dict[str, list[str]] = {}
        for entry in section:
            name, sep, text = entry.partition(":")
            if not sep or not text.strip():
                errors.print(f'[red]--section {entry!r}: write it as "Section: text"[/]')
                raise typer.Exit(2)
            sections.setdefault(name.strip(), []).append(text.strip())
        content = sections
    with open_memory() as memory:
        try:
            report = memory.update_session(
                session_id, content, topic=topic, summary=summary, keywords=keywords
            )
        except ValueError as exc:
            errors.print(f"[red]{escape(str(exc))}[/]")
            raise typer.Exit(2) from None
        _show(report, as_json)


@session_app.command("continue")
def continue_(
    current: Annotated[str, typer.Argument(help="This session's ID, or 'new' to register one.")],
    source: Annotated[str, typer.Argument(help="The session to continue from.")],
    agent: Agent = None,
    as_json: Json = False,
) -> None:
    """Continue work from a source session (Continues From ↔ Referenced By)."""
    with open_memory() as memory:
        _show(
            memory.continue_session(None if current == "new" else current, source, agent=agent),
            as_json,
        )


@session_app.command("release")
def release(
    current: Annotated[str, typer.Argument(help="The referencing session.")],
    source: Annotated[str, typer.Argument(help="The source it no longer continues.")],
    as_json: Json = False,
) -> None:
    """Release a reference made by continue."""
    with open_memory() as memory:
        _show(memory.release_session(current, source), as_json)


@session_app.command("archive")
def archive(
    session_id: Annotated[str, typer.Argument(help="The session to archive.")],
    force: Annotated[bool, typer.Option("--force", help="Archive even if referenced.")] = False,
    as_json: Json = False,
) -> None:
    """Move a finished session into memory/archive/<id>/ and off the board."""
    with open_memory() as memory:
        _show(memory.archive_session(session_id, force=force), as_json)


@session_app.command("list")
def list_(as_json: Json = False) -> None:
    """Board rows, active and meaningful first."""
    with open_memory() as memory:
        rows = memory.board_rows()
    if as_json:
        rows_json = [views.board_row(r) for r in rows]
        console.print_json(json.dumps(rows_json, ensure_ascii=False))
        return
    if not rows:
        console.print(f"The board is empty: {memory.board.index_path} has no sessions yet.")
        return
    if not console.is_terminal:  # piped: one row a line, tab-separated, for scripts
        print(
            "\t".join(["Session ID", "Status", "Topic", "Summary", "Referenced By", "Updated At"])
        )
        for r in rows:
            cells = [r.session_id, r.status, r.topic, r.summary]
            print("\t".join([*cells, format_references(r.referenced_by), r.updated_at]))
        return
    table = Table("Status", "Topic", "Summary", "Referenced By", "Updated At")
    table.columns.insert(0, Column("Session ID", no_wrap=True))
    colours = {"active": "green", "stale": "yellow", "idle": "dim"}
    for r in rows:
        colour = colours.get(r.status, "red")
        table.add_row(
            r.session_id,
            f"[{colour}]{r.status}[/]",
            r.topic,
            r.summary,
            format_references(r.referenced_by),
            r.updated_at,
        )
    console.print(table)


@session_app.command("show")
def show(
    session_id: Annotated[str, typer.Argument(help="The Memory Session ID to show.")],
    as_json: Json = False,
) -> None:
    """A session's board row and its snapshot."""
    with open_memory() as memory:
        row = memory.board.board().get(session_id)
        try:
            snapshot = memory.board.snapshot_text(session_id) if row else None
        except BoardError as exc:  # a hand-edited row whose id is no Memory Session ID
            errors.print(f"[red]{escape(str(exc))}[/]")
            raise typer.Exit(1) from None
    if row is None:
        errors.print(f"[red]{session_id} is not on the board[/] (memory/index.md)")
        raise typer.Exit(1)
    if as_json:
        console.print_json(
            json.dumps({"session": views.board_row(row), "snapshot": snapshot}, ensure_ascii=False)
        )
        return
    for key, value in views.board_row(row).items():
        console.print(f"[bold]{key}[/]: {value}", highlight=False)
    console.print()
    console.print(
        snapshot if snapshot is not None else "(no snapshot yet)", highlight=False, markup=False
    )


def organize(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report only; change nothing.")
    ] = False,
    stale_days: Annotated[
        int | None, typer.Option(help="Days before active becomes stale.")
    ] = None,
    as_json: Json = False,
) -> None:
    """Delete idle rows and mark overdue active rows stale (never archives)."""
    with open_memory() as memory:
        _show(memory.organize(dry_run=dry_run, stale_days=stale_days), as_json)
