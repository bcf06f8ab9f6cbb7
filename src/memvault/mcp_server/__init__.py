"""memvault's MCP server: its tools over stdio (``memvault mcp``) and streamable HTTP
(``/mcp`` inside ``memvault serve``), and agentmemory's REST MCP routes over the same tools.
"""

from memvault.mcp_server.server import TOOLS, MemoryServer, build_server, http_endpoint

__all__ = ["TOOLS", "MemoryServer", "build_server", "http_endpoint"]
