"""How a command reaches memory: through the running server when one runs for this
memory, in this process only when none does; and how a failure it leaves to the app ends
it (the CLI's one table of error outcomes).

Nothing heavy is imported here: ``Memory`` (the store, numpy, the search index) loads
only when a command opens the memory in process.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from memvault.cli import remote

if TYPE_CHECKING:
    from typing import Any

    from memvault.config import Settings
    from memvault.memory import Memory

errors = Console(stderr=True, soft_wrap=True)


def server() -> remote.Server | None:
    """This memory's running server, or None to work in process. A server that runs but
    does not answer ends the command (exit 1): opening the memory here would make a second
    writer of it. One that serves another home or vault than this environment names ends
    it too (exit 2), naming both."""
    try:
        return remote.find()
    except remote.NotAnswering as exc:
        errors.print(f"[red]{escape(str(exc))}[/]", highlight=False)
        raise typer.Exit(1) from None
    except remote.OtherMemory as exc:  # never written to, nor opened here beside it
        errors.print(f"[red]refused[/]: {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from None


def settings(**overrides: Any) -> Settings:
    """This memory's settings, read from the environment when a command asks (the CLI's
    one place that builds them; ``overrides`` are a command's own options)."""
    from memvault.config import Settings

    return Settings(**overrides)


def open_memory() -> Memory:
    """The memory, opened in this process (no server runs for it)."""
    from memvault.errors import MemvaultError
    from memvault.memory import Memory

    try:
        return Memory.open(settings())
    except MemvaultError as exc:
        errors.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2) from None


def fail(message: str, code: int = 1, *, prefix: str = "") -> NoReturn:
    """End the command with ``message`` on one line of stderr, as the in-process path
    says it (``prefix`` is the red part before it, like ``not saved``)."""
    if prefix:
        errors.print(f"[red]{prefix}[/]: {escape(message)}", highlight=False)
    else:
        errors.print(f"[red]{escape(message)}[/]", highlight=False)
    raise typer.Exit(code)


def reported(exc: Exception) -> int | None:
    """Print a failure a command left to the app, and return its exit code; None for a bug."""
    from memvault.errors import StoreFailure

    if isinstance(exc, StoreFailure):  # a full disk, a locked database, a read-only vault
        errors.print(str(exc), style="red", highlight=False, markup=False)
        return 1
    if isinstance(exc, remote.ServerRefused | remote.Unavailable):
        try:
            refused(exc) if isinstance(exc, remote.ServerRefused) else away(exc)
        except typer.Exit as done:
            return done.exit_code
    if "pydantic" in sys.modules:  # a setting from the environment that cannot be used
        from pydantic import ValidationError

        from memvault.config import settings_problems

        if isinstance(exc, ValidationError):
            for line in settings_problems(exc):
                errors.print(f"[red]{line}[/]", highlight=False)
            return 2
    return None


def refused(exc: remote.ServerRefused) -> NoReturn:
    """An error answer no command says in its own words: the secret, a full disk, a bug."""
    if exc.status in (401, 403):
        fail(
            f"the memvault server at {exc.url} refused the secret (HTTP {exc.status}): set "
            "MEMVAULT_SECRET to the server's secret"
        )
    if exc.status == 503:  # a full disk, a locked database, a read-only vault
        errors.print(exc.error, style="red", highlight=False, markup=False)
        raise typer.Exit(1)
    fail(f"the memvault server at {exc.url} answered {exc.status}: {exc.error}")


def away(exc: remote.Unavailable) -> NoReturn:
    fail(f"the memvault server stopped answering: {exc}")
