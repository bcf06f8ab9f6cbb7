"""``memvault mcp``: a light stdio relay between an MCP host and the memvault server.

A host starts ``memvault mcp`` for every editor window and speaks MCP on its stdin and
stdout. The relay forwards each message to the server's streamable HTTP endpoint
(``/mcp``) and writes the answers back; it opens no store and loads no model, so it
answers at once and adds no second writer. It imports only the standard library and the
hook's transport, and starts the server when none runs (``memvault.server_process``).
"""

from __future__ import annotations


def main() -> int:
    """Relay stdin to the server until stdin closes or a signal ends it; the exit status."""
    from memvault.relay.stdio import main as run

    return run()
