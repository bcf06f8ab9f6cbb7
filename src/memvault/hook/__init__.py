"""The hook command: a host's hook payload in, an event for the server, the host's answer out.

``memvault-hook <host>`` runs on every hook a host fires. It imports only the standard
library and nothing of the server, finishes well inside the hosts' hook budget whatever the
server does, keeps an event it could not deliver in the spool, and always exits 0: a memory
hook never blocks an agent by accident.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Run one hook (``argv`` is ``[host]``; the process's arguments when None)."""
    from memvault.hook.command import main as run

    return run(argv)
