"""The ``memvault`` command: its Typer app, built from a table of commands.

A command's module is imported only when the command runs (or ``--help`` lists them
all): ``memvault search`` with a server running loads the CLI's light modules and asks
the server, and never imports the store, numpy, FastAPI or a model.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from typing import Annotated, Any

import typer
from rich.console import Console

console = Console()

# Commands in the order people reach for them, grouped as the README groups them:
# (name, "module:attribute" under memvault.cli, a Typer group or a command).
_SERVER, _MEMORY, _BOARD, _UPKEEP, _HOSTS = (
    "The server",
    "Remember and find",
    "The session board",
    "Keep memory tidy",
    "Editors and hosts",
)
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("serve", "server:serve", _SERVER),
    ("status", "server:status", _SERVER),
    ("doctor", "doctor:doctor", _SERVER),
    ("stop", "server:stop", _SERVER),
    ("logs", "service:logs", _SERVER),
    ("service", "service:service_app", _SERVER),
    ("vault", "vault:vault", _SERVER),
    ("search", "recall:search", _MEMORY),
    ("get", "recall:get", _MEMORY),
    ("save", "fragments:save", _MEMORY),
    ("fragments", "fragments:fragments_app", _MEMORY),
    ("graph", "graph:graph_app", _MEMORY),
    ("session", "board:session_app", _BOARD),
    ("organize", "board:organize", _BOARD),
    ("maintain", "recall:maintain", _UPKEEP),
    ("export", "archive:export", _UPKEEP),
    ("reindex", "recall:reindex", _UPKEEP),
    ("private", "privacy:private", _UPKEEP),
    ("purge", "privacy:purge", _UPKEEP),
    ("rebuild", "recall:rebuild", _UPKEEP),
    ("worker", "server:worker", _UPKEEP),
    ("import", "importer:import_app", _UPKEEP),
    ("install", "install:install_app", _HOSTS),
    ("mcp", "mcp:mcp", _HOSTS),
    ("hook", "hook:hook", _HOSTS),
)
_NAMES = frozenset(name for name, _, _ in COMMANDS)


def _version(value: bool) -> None:
    if value:
        from memvault import __version__  # package metadata: read only when asked

        console.print(f"memvault {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    pass


def build(only: str | None = None) -> typer.Typer:
    """The app with every command, or with ``only`` that one (what a run of it needs)."""
    built = typer.Typer(
        name="memvault",
        help="Lasting memory for AI coding agents, kept as markdown in your Obsidian vault.",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
    )
    built.callback()(_root)
    for name, target, panel in COMMANDS:
        if only is not None and name != only:
            continue
        module, _, attribute = target.partition(":")
        found = getattr(importlib.import_module(f"memvault.cli.{module}"), attribute)
        if isinstance(found, typer.Typer):
            built.add_typer(found, name=name, rich_help_panel=panel)
        else:
            built.command(name, rich_help_panel=panel, short_help=_summary(found))(found)
    return built


def _summary(command: Any) -> str:
    """A command's line in the list: its docstring's first paragraph as one line (the
    list would otherwise break it where the source's lines end, mid-sentence)."""
    paragraph = (inspect.getdoc(command) or "").split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole app, for typer.testing and completion scripts
        globals()["app"] = built = build()
        return built
    raise AttributeError(name)


def main() -> None:
    args = sys.argv[1:]
    chosen = build(args[0] if args and args[0] in _NAMES else None)
    try:
        chosen()
    except Exception as exc:
        from memvault.cli.reach import reported

        code = reported(exc)
        if code is None:
            raise
        raise SystemExit(code) from None
