"""``memvault mcp``: memvault's MCP tools for a host that starts servers over stdio."""

from __future__ import annotations


def mcp() -> None:
    """Relay MCP over stdio to the memvault server, for Cursor, Claude Code and other hosts.

    The host starts this command and speaks MCP on its stdin and stdout; the tools run in
    the server (``memvault serve``), which this command starts when none is running. It
    opens no store and loads no model. Diagnostics go to stderr.
    """
    from memvault.relay import main

    raise SystemExit(main())
