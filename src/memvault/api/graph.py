"""Graph routes under ``/agentmemory/graph/``: query, stats and reset, in agentmemory's
shapes (nodes ``{id, type, name, properties}``, edges ``{sourceNodeId, targetNodeId,
type, weight}``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from memvault.api import schemas
from memvault.api.guards import DecodedBodyRoute
from memvault.graph.model import KINDS, MAX_DEPTH, MAX_LIMIT, MAX_OFFSET
from memvault.memory.graph import Graph

router = APIRouter(prefix="/agentmemory", tags=["graph"], route_class=DecodedBodyRoute)

NodeType = Annotated[str, Field(pattern=f"^({'|'.join(KINDS)})$")]


class QueryBody(BaseModel):
    model_config = ConfigDict(
        extra="ignore",
        populate_by_name=True,
        json_schema_extra={
            "examples": [
                {"startNodeId": "file:src/checkout/payment.ts", "maxDepth": 2},
                {"query": "payment", "nodeType": "concept", "limit": 20},
            ]
        },
    )

    start_node_id: Annotated[
        str | None,
        Field(alias="startNodeId", min_length=1, max_length=400, description="`kind:key`"),
    ] = None
    node_type: Annotated[NodeType | None, Field(alias="nodeType")] = None
    max_depth: Annotated[int, Field(alias="maxDepth", ge=0, le=MAX_DEPTH)] = 2
    query: Annotated[str | None, Field(max_length=200)] = None
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 50
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0


def _graph(request: Request) -> Graph:
    return request.app.state.memory.graph


@router.post(
    "/graph/query",
    summary="Nodes and the edges among them: a walk, a name, a kind",
    response_model=None,
    responses={200: {"description": "The nodes and edges", "model": schemas.GraphSlice}},
)
async def query(request: Request, body: QueryBody) -> dict[str, Any]:
    found = await run_in_threadpool(
        _graph(request).query,
        start=body.start_node_id,
        kind=body.node_type,
        text=body.query,
        depth=body.max_depth,
        limit=body.limit,
        offset=body.offset,
    )
    return {
        "success": True,
        "nodes": [n.to_dict() for n in found.nodes],
        "edges": [e.to_dict() for e in found.edges],
        "depth": found.depth,
        "truncated": found.truncated,
        "limit": body.limit,
        "offset": body.offset,
    }


@router.get(
    "/graph/stats",
    summary="Nodes per type and edges per relation",
    response_model=None,
    responses={200: {"description": "The counts", "model": schemas.GraphStats}},
)
async def stats(request: Request) -> dict[str, Any]:
    counted = await run_in_threadpool(_graph(request).stats)
    return {"success": True, **counted.to_dict()}


@router.post(
    "/graph/reset",
    summary="Empty the graph; the pipeline fills it again",
    response_model=None,
    responses={200: {"description": "What was cleared", "model": schemas.GraphCleared}},
)
async def reset(request: Request) -> dict[str, Any]:
    cleared = await run_in_threadpool(_graph(request).reset)
    return {"success": True, "cleared": cleared.to_dict()}
