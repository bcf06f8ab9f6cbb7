"""The privacy commands: ``memvault private on|off [DIR]`` and ``memvault purge TEXT``.

``private on`` writes an empty ``.memvaultignore`` (a comment only) in the folder, which
the hook reads itself (see :mod:`memvault.hook.privacy`); ``off`` removes it. A file that
lists private paths is the user's own and is never overwritten or removed here. ``purge``
replaces a text everywhere memvault keeps it (``memory.purge``), through the server when
one runs.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from memvault.cli import reach, remote
from memvault.hook import privacy

console = Console(highlight=False)
CONTENT = (
    "# memvault: this project is private. Its hooks record nothing and inject nothing.\n"
    "# `memvault private off` removes this file; lines of paths (.env, secrets/**) instead\n"
    "# keep only those paths private.\n"
)


class State(enum.StrEnum):
    on = "on"
    off = "off"


def private(
    state: Annotated[State, typer.Argument(help="on: nothing of the project is recorded.")],
    folder: Annotated[
        Path | None, typer.Argument(help="The project's folder (default: the current one).")
    ] = None,
) -> None:
    """Make a project private (its hooks send nothing and inject nothing), or not."""
    where = (folder or Path.cwd()).expanduser().resolve()
    if not where.is_dir():
        _fail(f"{where} is not a folder")
    home = str(reach.settings().home)
    file = where / privacy.IGNORE_FILE
    rules = privacy.load(str(file))
    if state is State.on:
        if rules is not None and not rules.whole:
            _fail(
                f"{file} lists private paths; it was left as it is. Empty it (or remove "
                "its lines) to make the whole project private"
            )
        if rules is None:
            file.write_text(CONTENT, encoding="utf-8")
        privacy.note_project(home, str(where))
        console.print(f"{escape(str(where))} is private: its hooks record nothing ({file})")
        return
    if rules is not None and not rules.whole:
        _fail(f"{file} lists private paths; it was left as it is (edit it by hand)")
    if rules is not None:
        file.unlink()
        privacy.forget_project(home, str(where))
    still = next((r for r in privacy.ignore_files(str(where)) if r.whole), None)
    if still is not None:
        _fail(f"{where} is still private: {still.file} covers it (remove that file)")
    console.print(f"{escape(str(where))} is not private: its hooks record it again")


def purge(
    text: Annotated[str, typer.Argument(help="The text to replace (any case).")],
    regex: Annotated[
        bool, typer.Option("--regex", help="TEXT is a Python regular expression.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List the places and counts; change nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Replace TEXT with [REDACTED:purged] everywhere memvault keeps it: events,
    observations, summaries, the board, snapshots, fragments, the search index, the spool."""
    running = reach.server()
    body = {"text": text, "regex": regex, "dryRun": dry_run}
    if running is not None:
        shown = running.post("/purge", body, seconds=remote.LONG_SECONDS)
    else:
        from memvault import present

        with reach.open_memory() as memory:
            shown = present.purged(memory.purge.purge(text, regex=regex, dry_run=dry_run))
    if as_json:
        console.print_json(json.dumps(shown, ensure_ascii=False))
        return
    for place in shown["places"]:
        console.print(f"  {escape(place['where'])}: {place['matches']} in {place['rows']}")
    if not shown["places"]:
        console.print("found nowhere: nothing to purge")
    elif dry_run:
        console.print(f"would replace {shown['matches']} match(es) in {shown['rows']} place(s)")
    else:
        console.print(
            f"replaced {shown['matches']} match(es) in {shown['rows']} place(s) with "
            "[REDACTED:purged]; the purge is recorded (not the text)",
            markup=False,
        )


def _fail(message: str) -> None:
    reach.errors.print(f"[red]{escape(message)}[/]", highlight=False)
    raise typer.Exit(1)
