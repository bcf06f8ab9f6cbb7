"""``memvault hook <host>``: the hook command, from the main CLI.

Hosts should run ``memvault-hook <host>`` instead: it does the same without loading the CLI,
which costs more time than the whole hook.
"""

from __future__ import annotations

from typing import Annotated

import typer


def hook(
    host: Annotated[str, typer.Argument(help="cursor, claude-code, codex or gemini.")],
) -> None:
    """Record a host hook event: the payload on stdin, the host's answer on stdout.
    Always exits 0."""
    from memvault.hook import main

    main([host])
