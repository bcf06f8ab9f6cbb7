"""``memvault session …`` and ``memvault organize``: the session board from a terminal.

Each asks the running server when one runs for this memory, and works on the board in
this process only when none does; the report printed is the same either way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from memvault.cli import reach, remote
from memvault.cli.reach import errors, fail, open_memory, server

__all__ = ["errors", "open_memory", "organize", "session_app"]

console = Console()
session_app = typer.Typer(
    help="The session board in your vault (memory/index.md).", no_args_is_help=True
)

Json = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
Agent = Annotated[str | None, typer.Option("--agent", help="Agent name, e.g. cursor-main-agent.")]
_REPORT_KEYS = ("operation", "ok", "sessionId", "message")


def _operate(
    remotely: Callable[[remote.Server], Any], here: Callable[[Any], Any], as_json: bool
) -> None:
    """Run a board operation (on the server, or here when none runs) and show its report.
    A request the board refuses as wrong ends with exit 2, a board memvault will not
    change (a row twice, a header renamed) with its line and exit 1."""
    running = server()
    if running is not None:
        try:
            report = remotely(running)
        except remote.ServerRefused as exc:
            if exc.status == 409 and "operation" in exc.body:
                report = exc.body
            elif exc.status in (400, 409):
                fail(exc.error, 2 if exc.status == 400 else 1)
            else:
                raise
        report.pop("error", None)
    else:
        from memvault.vault.board import BoardFormatError

        with open_memory() as memory:
            try:
                report = here(memory).to_dict()
            except BoardFormatError as exc:
                fail(str(exc))
            except ValueError as exc:
                fail(str(exc), 2)
    _show(report, as_json)


def _show(report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        console.print_json(json.dumps(report, ensure_ascii=False))
    else:
        ok = report["ok"]
        (console if ok else errors).print(
            f"[{'green' if ok else 'red'}]{report['operation']}[/]: {escape(report['message'])}",
            highlight=False,
        )
        for key, value in report.items():
            if key in _REPORT_KEYS or key == "dryRun" or value in ([], {}, None):
                continue
            label = _DRY_RUN_WORDS.get(key, _words(key)) if report.get("dryRun") else _words(key)
            console.print(f"  {label}: {escape(_human(value))}", highlight=False)
    if not report["ok"]:
        raise typer.Exit(1)


# What a dry run's lists are: rows it would change, not rows it changed.
_DRY_RUN_WORDS = {
    "deleted": "would delete",
    "stale": "would mark stale",
    "archived": "would archive",
}


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


def _row(session_id: str) -> str:
    return f"/board/sessions/{remote.path_part(session_id)}"


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
    given = {"manual": manual, "topic": topic, "summary": summary, "keywords": keywords}
    body = {"agentName": agent, **given, "snapshot": content}
    _operate(
        lambda running: running.post("/board/register", body),
        lambda memory: memory.board.register_session(agent=agent, content=content, **given),
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
    content: Any = file.read_text(encoding="utf-8") if file else None
    if section:
        sections: dict[str, list[str]] = {}
        for entry in section:
            name, sep, text = entry.partition(":")
            if not sep or not text.strip():
                errors.print(f'[red]--section {entry!r}: write it as "Section: text"[/]')
                raise typer.Exit(2)
            sections.setdefault(name.strip(), []).append(text.strip())
        content = sections
    given = {"topic": topic, "summary": summary, "keywords": keywords}
    body = {
        "snapshot": content if isinstance(content, str) else None,
        "sections": content if isinstance(content, dict) else None,
        **given,
    }
    _operate(
        lambda running: running.post(f"{_row(session_id)}/update", body),
        lambda memory: memory.board.update_session(session_id, content, **given),
        as_json,
    )


@session_app.command("continue")
def continue_(
    current: Annotated[str, typer.Argument(help="This session's ID, or 'new' to register one.")],
    source: Annotated[str, typer.Argument(help="The session to continue from.")],
    agent: Agent = None,
    as_json: Json = False,
) -> None:
    """Continue work from a source session (Continues From ↔ Referenced By)."""
    this = None if current == "new" else current
    body = {"source": source, "current": this, "agentName": agent}
    _operate(
        lambda running: running.post("/board/continue", body),
        lambda memory: memory.board.continue_session(this, source, agent=agent),
        as_json,
    )


@session_app.command("release")
def release(
    current: Annotated[str, typer.Argument(help="The referencing session.")],
    source: Annotated[str, typer.Argument(help="The source it no longer continues.")],
    as_json: Json = False,
) -> None:
    """Release a reference made by continue."""
    _operate(
        lambda running: running.post("/board/release", {"source": source, "current": current}),
        lambda memory: memory.board.release_session(current, source),
        as_json,
    )


@session_app.command("archive")
def archive(
    session_id: Annotated[str, typer.Argument(help="The session to archive.")],
    force: Annotated[bool, typer.Option("--force", help="Archive even if referenced.")] = False,
    as_json: Json = False,
) -> None:
    """Move a finished session into memory/archive/<id>/ and off the board."""
    _operate(
        lambda running: running.post(f"{_row(session_id)}/archive", {"force": force}),
        lambda memory: memory.board.archive_session(session_id, force=force),
        as_json,
    )


@session_app.command("list")
def list_(as_json: Json = False) -> None:
    """Board rows, active and meaningful first."""
    running = server()
    if running is not None:
        try:
            rows = running.get("/board/sessions")["sessions"]
        except remote.ServerRefused as exc:
            if exc.status != 409:
                raise
            fail(exc.error)
        board_file = None
    else:
        from memvault import present

        with open_memory() as memory:
            rows = [present.board_row(r) for r in _readable(memory.board.rows)]
            board_file = memory.board.index_path
    if as_json:
        console.print_json(json.dumps(rows, ensure_ascii=False))
        return
    if not rows:
        if board_file is None:
            board_file = reach.settings().vault_path / "memory" / "index.md"
        console.print(
            f"The board is empty: {board_file} has no sessions yet. A row appears when an "
            "editor connected with `memvault install claude-code` (or `cursor`) works in a "
            "session; `memvault session register --manual` adds one by hand.",
            soft_wrap=True,
        )
        return
    columns = ("sessionId", "status", "topic", "summary", "referencedBy", "updatedAt")
    if not console.is_terminal:  # piped: one row a line, in aligned columns (--json: scripts)
        header = ["Session ID", "Status", "Topic", "Summary", "Referenced By", "Updated At"]
        for line in aligned([header, *([r[key] for key in columns] for r in rows)]):
            print(line)
        return
    table = Table("Status", "Topic", "Summary", "Referenced By", "Updated At")
    table.columns.insert(0, Column("Session ID", no_wrap=True))
    colours = {"active": "green", "stale": "yellow", "idle": "dim"}
    for r in rows:
        colour = colours.get(r["status"], "red")
        table.add_row(
            r["sessionId"],
            f"[{colour}]{r['status']}[/]",
            r["topic"],
            r["summary"],
            r["referencedBy"],
            r["updatedAt"],
        )
    console.print(table)


def aligned(lines: list[list[str]]) -> list[str]:
    """Rows of cells as lines whose columns line up (two spaces apart), each cell on one
    line; the widths are of what is printed, so wide characters count twice."""
    cells = [[" ".join(cell.split()) for cell in line] for line in lines]
    widths = [max(cell_len(line[i]) for line in cells) for i in range(len(cells[0]))]
    return [
        "  ".join(
            cell + " " * (widths[i] - cell_len(cell)) if i < len(line) - 1 else cell
            for i, cell in enumerate(line)
        )
        for line in cells
    ]


def _readable(read: Callable[[], Any]) -> Any:
    """What ``read`` gives, or the command ends naming the line of a board memvault will
    not read (as the server's 409 says it)."""
    from memvault.vault.board import BoardFormatError

    try:
        return read()
    except BoardFormatError as exc:
        fail(str(exc))


@session_app.command("show")
def show(
    session_id: Annotated[str, typer.Argument(help="The Memory Session ID to show.")],
    as_json: Json = False,
) -> None:
    """A session's board row and its snapshot."""
    running = server()
    if running is not None:
        try:
            found = running.get(_row(session_id))
        except remote.ServerRefused as exc:
            if exc.status == 404:
                found = None
            elif exc.status in (400, 409):
                fail(exc.error)
            else:
                raise
        row = found["session"] if found else None
        snapshot = found["snapshot"] if found else None
        given = found.get("injections", []) if found else []
    else:
        from memvault import present
        from memvault.vault.board_files import BoardError

        with open_memory() as memory:
            board_row = _readable(lambda: memory.board.row_in_file(session_id))
            try:
                snapshot = memory.board.snapshot_text(session_id) if board_row else None
            except BoardError as exc:  # a hand-edited row whose id is no Memory Session ID
                fail(str(exc))
            row = present.board_row(board_row) if board_row else None
            given = memory.context.injections(session_id)
    if row is None:
        errors.print(f"[red]{session_id} is not on the board[/] (memory/index.md)")
        raise typer.Exit(1)
    if as_json:
        shown = {"session": row, "snapshot": snapshot, "injections": given}
        console.print_json(json.dumps(shown, ensure_ascii=False))
        return
    for key, value in row.items():
        console.print(f"[bold]{key}[/]: {value}", highlight=False)
    console.print()
    console.print(
        snapshot if snapshot is not None else "(no snapshot yet)", highlight=False, markup=False
    )
    if given:
        console.print()
        console.print("[bold]Memory given to the agent[/]", highlight=False)
        for block in given:
            ids = ", ".join(f"{i['kind']} {i['id']}" for i in block["items"])
            line = f"{block['at']} {block['answered']} ({block['tokens']} tokens): {ids}"
            console.print(line, highlight=False, markup=False)


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
    _operate(
        lambda running: running.post(
            "/board/organize", {"dryRun": dry_run, "staleDays": stale_days}
        ),
        lambda memory: memory.board.organize(dry_run=dry_run, stale_days=stale_days),
        as_json,
    )
