"""``memvault fragments …``: the memory fragments in your vault."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from memvault.cli.board import open_memory

console = Console(soft_wrap=True)
fragments_app = typer.Typer(help="Memory fragments in your vault.", no_args_is_help=True)


@fragments_app.command("check")
def check(
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
) -> None:
    """Report fragment files that break the rules (exit 1 if any has an error)."""
    with open_memory() as memory:
        folder = memory.settings.fragments_path
        report = memory.check_fragments()
    if as_json:
        console.print_json(
            json.dumps(
                {"files": report.files, "problems": [p.to_dict() for p in report.problems]},
                ensure_ascii=False,
            )
        )
    elif not report.problems:
        console.print(f"{report.files} fragment file(s) in {folder}: all follow the rules")
    else:
        table = Table("File", "Severity", "Rule", "What to do")
        for p in report.problems:
            colour = "red" if p.severity == "error" else "yellow"
            table.add_row(p.path, f"[{colour}]{p.severity}[/]", p.rule, p.message)
        console.print(table)
        console.print(
            f"{report.files} file(s) checked: {len(report.errors)} error(s), "
            f"{len(report.problems) - len(report.errors)} warning(s)"
        )
    if report.errors:
        raise typer.Exit(1)
