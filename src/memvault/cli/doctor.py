"""The ``memvault doctor`` command: the checks of :mod:`memvault.doctor`, printed."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from memvault import doctor as checks
from memvault.cli import reach

# Piped, a finding stays one line however long (the terminal wraps it, not Rich at 80).
console = Console(soft_wrap=True)
_COLOURS = {checks.OK: "green", checks.WARN: "yellow", checks.PROBLEM: "red"}


def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
) -> None:
    """Check the server, store, vault, index, embeddings, LLM, spool, each editor's hooks
    and MCP entry, and versions; print each problem with its fix. Exits 1 on a problem."""
    findings = checks.diagnose(reach.settings())
    failed = checks.failed(findings)
    if as_json:
        report = {"ok": not failed, "checks": [f.to_dict() for f in findings]}
        typer.echo(json.dumps(report, indent=2))
    else:
        width = max(len(found.name) for found in findings)
        for found in findings:
            mark = f"[{_COLOURS[found.level]}]{found.level:<7}[/]"
            console.print(f"{mark}  [bold]{found.name:<{width}}[/]  {escape(found.finding)}")
            if found.fix:
                console.print(f"{'':<7}  {'':<{width}}  fix: {escape(found.fix)}", highlight=False)
        problems = sum(f.level == checks.PROBLEM for f in findings)
        console.print(
            f"[red]{problems} problem(s) found[/]" if failed else "[green]no problems found[/]"
        )
    if failed:
        raise typer.Exit(1)
