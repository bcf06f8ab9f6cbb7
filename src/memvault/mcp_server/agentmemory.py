"""agentmemory's MCP tool names and argument spellings, mapped onto memvault's tools.

Callers of ``POST /agentmemory/mcp/call`` written for agentmemory use its names and its
argument shapes (comma-separated lists, ``token_budget``, ``expandIds``). Where memvault
has the same tool, the call is translated here; any other name goes to memvault's tools as
it is, so an agentmemory tool memvault does not have is an unknown tool.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

from memvault.mcp_server.answers import NotFound, answer
from memvault.mcp_server.server import MemoryServer

EXPAND_LIMIT = 100


async def call(server: MemoryServer, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """Call tool ``name`` as agentmemory's REST route would be asked to."""
    if name == "memory_smart_search":
        return await _smart_search(server, arguments)
    if name == "memory_recall":
        arguments = _recall(arguments)
    elif name == "memory_save":
        arguments = _save(arguments)
    result = await server.call_tool(name, arguments)
    assert isinstance(result, CallToolResult)  # memvault's tools never ask for more input
    return result


def _recall(arguments: dict[str, Any]) -> dict[str, Any]:
    """agentmemory's recall is a search sized by ``limit`` and ``format``; memvault's packs
    the block for a task into a token budget."""
    translated = {k: v for k, v in arguments.items() if k not in ("limit", "format", "agentId")}
    if "token_budget" in translated:
        translated["budget"] = translated.pop("token_budget")
    return translated


def _save(arguments: dict[str, Any]) -> dict[str, Any]:
    """agentmemory's ``type`` and ``concepts`` become tags (fragments have no type), its
    ``files`` become facts, as ``POST /agentmemory/remember`` does."""
    translated = dict(arguments)
    translated.pop("agentId", None)
    tags = _listed(translated.pop("concepts", None))
    kind = translated.pop("type", None)
    if isinstance(kind, str) and kind.strip():
        tags.append(kind.strip())
    files = _listed(translated.pop("files", None))
    if tags:
        translated["tags"] = [*_listed(translated.get("tags")), *tags]
    content = translated.get("content")
    if files and (content is None or isinstance(content, str)):
        # After what the content says, as /remember writes them.
        lines = "\n".join(f"- file: {path}" for path in files)
        translated["content"] = f"{content}\n{lines}" if content else lines
    return translated


async def _smart_search(server: MemoryServer, arguments: dict[str, Any]) -> CallToolResult:
    """Compact results for a query, or each of ``expandIds`` read whole (ids not found are
    left out, as agentmemory does)."""
    ids = _listed(arguments.get("expandIds"))
    if not ids:
        search = {k: v for k, v in arguments.items() if k in ("query", "limit", "project")}
        return await server.call_tool("memory_search", search)
    if len(ids) > EXPAND_LIMIT:
        raise ToolError(f"expandIds: at most {EXPAND_LIMIT} ids, got {len(ids)}")
    results, texts = [], []
    for memory_id in ids:
        try:
            read = await server.call_tool("memory_get", {"id": memory_id})
        except ToolError as exc:
            if not isinstance(exc.__cause__, NotFound):
                raise
            continue
        assert isinstance(read, CallToolResult)
        results.append(read.structured_content)
        texts += [block.text for block in read.content if isinstance(block, TextContent)]
    data = {"mode": "expanded", "results": results, "truncated": False}
    return answer(data, "\n\n---\n\n".join(texts) or "none of those ids is in memory")


def _listed(value: Any) -> list[str]:
    """A list argument as agentmemory sends it: a list, or one comma-separated string."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return [str(part).strip() for part in value if str(part).strip()]
    return []
