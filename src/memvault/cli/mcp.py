"""``memvault mcp``: memvault's MCP tools for a host that starts servers over stdio."""

from __future__ import annotations

from memvault.cli.board import open_memory


def mcp() -> None:
    """Serve the MCP tools over stdio, for Cursor, Claude Code and other MCP hosts.

    The host starts this command and speaks MCP on its stdin and stdout; it opens the
    memory the environment configures, like every other command. Logs go to stderr.
    """
    # The SDK loads only when this command runs: other commands start faster without it.
    from memvault.mcp_server import build_server

    with open_memory() as memory:
        build_server(memory).run("stdio")
