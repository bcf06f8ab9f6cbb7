"""``memvault vault [PATH]``: which Obsidian vault this home's memory is kept in, and
pointing it at one you already have.

The choice is recorded in ``$MEMVAULT_HOME/vault.path``, so the server, the relays, the
hook and every command of this home read the same vault without an environment variable
in each editor's config; ``MEMVAULT_VAULT``, when set, still wins.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from memvault import server_process
from memvault.cli import reach
from memvault.hook.paths import VAULT_FILE

if TYPE_CHECKING:
    from memvault.config import Settings

console = Console(soft_wrap=True, highlight=False)
errors = Console(stderr=True, soft_wrap=True, highlight=False)


def vault(
    path: Annotated[
        Path | None,
        typer.Argument(help="An existing folder, usually your Obsidian vault.", show_default=False),
    ] = None,
    default: Annotated[
        bool, typer.Option("--default", help="Go back to $MEMVAULT_HOME/vault.")
    ] = False,
) -> None:
    """Show the vault memory is kept in, or point it at an existing Obsidian vault
    (memvault writes only its own folders there: memory/ and agent-memory/)."""
    settings = reach.settings()
    record = settings.home / VAULT_FILE
    if path is not None and default:
        reach.fail("give a PATH or --default, not both", code=2)
    if path is None and not default:
        _show(settings.vault_path, _source(settings))
        return
    if default:
        record.unlink(missing_ok=True)
        chosen = settings.home / "vault"
    else:
        chosen = path.expanduser().resolve()  # type: ignore[union-attr]
        if not chosen.is_dir():
            reach.fail(f"{chosen} is not a folder: give an existing Obsidian vault", code=2)
        settings.home.mkdir(parents=True, exist_ok=True)
        partial = record.with_name(f"{VAULT_FILE}.{os.getpid()}.tmp")
        partial.write_text(f"{chosen}\n", encoding="utf-8")
        os.replace(partial, record)
    console.print(f"memory for {escape(str(settings.home))} is kept in {escape(str(chosen))}")
    console.print(
        f"memvault writes only its own folders there: memory/ (the session board) and "
        f"{escape(settings.fragments_dir)}/ (fragments)"
    )
    if not default and not (chosen / ".obsidian").is_dir():
        console.print("[dim]note:[/] it has no .obsidian folder: Obsidian has not opened it yet")
    _open_hint(chosen)
    if settings.vault is not None:
        errors.print(
            f"[yellow]MEMVAULT_VAULT={escape(str(settings.vault))} is set here and wins over "
            "this choice[/]: unset it (and install the editors again, which pinned it)"
        )
    held = server_process.serving(str(settings.home))
    if held is not None:
        console.print(
            f"The server (pid {held[0]}) still writes the vault it started with: restart it "
            "(`memvault stop`, then `memvault serve`; an editor's relay starts it again)."
        )


def _source(settings: Settings) -> str:
    if settings.vault is not None:
        return "MEMVAULT_VAULT"
    if settings.recorded_vault is not None:
        return f"`memvault vault`, recorded in {settings.home / VAULT_FILE}"
    return "the default, $MEMVAULT_HOME/vault; `memvault vault PATH` chooses your own"


def _show(chosen: Path, source: str) -> None:
    console.print(f"vault {escape(str(chosen))} (from {escape(source)})")
    _open_hint(chosen)


def _open_hint(chosen: Path) -> None:
    console.print(
        f"Open it in Obsidian (Open folder as vault): the viewer's links name it "
        f"{escape(chosen.resolve().name)!r}."
    )
