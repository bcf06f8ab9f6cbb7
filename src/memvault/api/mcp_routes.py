"""MCP over HTTP: the streamable HTTP endpoint at ``/mcp``, and agentmemory's REST MCP
routes ``GET /agentmemory/mcp/tools`` and ``POST /agentmemory/mcp/call``.

Both call the same tools (``memvault.mcp_server``). The REST routes answer in
agentmemory's shapes, so its MCP shim works against memvault: ``{"tools": [...]}``, a tool
result ``{"content": [{"type": "text", "text": …}], "structuredContent": …}``, and
``{"error": …}`` with 400 for a bad call or an unknown tool.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, ListToolsResult

from memvault.api.operation import answer, routes
from memvault.api.responses import JSONResponse, tool_error_answer
from memvault.config import Settings
from memvault.ingest.envelope import parse_json, refuse_nul
from memvault.mcp_server import MemoryServer, agentmemory, build_server, http_endpoint

MCP_PATH = "/mcp"

log = logging.getLogger(__name__)
router = routes("/agentmemory/mcp", "mcp")


def mount(app: FastAPI, settings: Settings) -> None:
    """Serve the MCP tools on ``app``: the streamable HTTP endpoint and the REST routes
    share one server, over the memory the app opens when it starts."""
    server = build_server(lambda: app.state.memory, settings.language)
    app.state.mcp_server = server
    endpoint = http_endpoint(server, host=settings.host, max_body_bytes=settings.max_body_bytes)
    # POST only: a stateless server has nothing of its own to stream, so the GET stream
    # that MCP lets a server offer is declined with 405, as the protocol provides.
    app.add_route(MCP_PATH, endpoint, methods=["POST"], include_in_schema=False)


@asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[None]:
    """Run the streamable HTTP sessions while the app serves (part of its lifespan)."""
    async with app.state.mcp_server.session_manager.run():
        yield


def _server(request: Request) -> MemoryServer:
    return request.app.state.mcp_server


@router.get(
    "/tools",
    summary="The MCP tools, as MCP's tools/list describes them",
    **answer("The tools", ListToolsResult),
)
async def tools(request: Request) -> dict[str, Any]:
    listed = await _server(request).list_tools()
    return {"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]}


@router.post(
    "/call",
    summary="Call an MCP tool: {name, arguments}",
    responses={
        200: {"description": "The tool's result", "model": CallToolResult},
        404: {"description": "An id not in memory"},
        409: {"description": "A board operation that was refused: `{error, report}`"},
        500: {"description": "The tool failed: a fault in memvault, logged"},
    },
    description=(
        "Answers the tool's result (`content` and `structuredContent`). A call without a "
        "name, with arguments the tool does not take, or for an unknown tool is `400 "
        "{error}`; an id not in memory is `404`; a board operation that was refused is "
        "`409 {error, report}`. agentmemory's names `memory_smart_search`, "
        "`memory_recall` and `memory_save` take agentmemory's arguments too."
    ),
)
async def call(request: Request) -> JSONResponse:
    body = parse_json(await request.body())
    refuse_nul(body)
    name = body.get("name") if isinstance(body, dict) else None
    if not isinstance(name, str) or not name:
        return JSONResponse({"error": "name is required"}, status_code=400)
    arguments = body.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return JSONResponse({"error": "arguments must be an object"}, status_code=400)
    try:
        result = await agentmemory.call(_server(request), name, arguments)
    except UnexpectedToolError as exc:
        log.error("MCP tool %s failed", name, exc_info=exc.__cause__ or exc)
        return JSONResponse({"error": str(exc)}, status_code=500)
    except ToolError as exc:
        return tool_error_answer(exc)
    return JSONResponse(
        result.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"result_type"})
    )
