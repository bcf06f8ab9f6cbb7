"""The ``memvault`` console script: the light commands without the CLI's imports.

A host starts ``memvault mcp`` for every editor window and waits for its ``initialize``
answer; loading the Typer app first would cost more than a second. ``mcp`` and
``hook <host>`` go straight to their standard-library paths; every other command (and
``--help`` of these two) loads the full CLI.
"""

from __future__ import annotations

import sys


def main() -> None:
    args = sys.argv[1:]
    if args == ["mcp"]:
        from memvault.relay import main as relay

        raise SystemExit(relay())
    if len(args) == 2 and args[0] == "hook" and not args[1].startswith("-"):
        from memvault.hook import main as hook

        raise SystemExit(hook(args[1:]))
    from memvault.cli.app import main as cli

    cli()


if __name__ == "__main__":
    main()
