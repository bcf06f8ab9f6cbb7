"""``memvault private on|off [DIR]``: make a project private, or not, with a
``.memvaultignore`` the hook reads itself (see :mod:`memvault.hook.privacy`).

``on`` writes an empty one (a comment only) in the folder; ``off`` removes it. A file that
lists private paths is the user's own and is never overwritten or removed here.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from memvault.cli import reach
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


def _fail(message: str) -> None:
    reach.errors.print(f"[red]{escape(message)}[/]", highlight=False)
    raise typer.Exit(1)
