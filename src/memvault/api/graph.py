"""Graph routes under ``/agentmemory/graph/``: query, stats and reset, in agentmemory's
shapes (nodes ``{id, type, name, properties}``, edges ``{sourceNodeId, targetNodeId,
type, weight}``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from starlette.concurrency import run_in_threadpool

from memvault import present
from memvault.api import schemas
from memvault.api.operation import Body, Served, answer, examples, routes
from memvault.graph.model import KINDS, MAX_DEPTH, MAX_LIMIT, MAX_OFFSET

router = routes("/agentmemory", "graph")

NodeType = Annotated[str, Field(pattern=f"^({'|'.join(KINDS)})$")]


class QueryBody(Body):
    model_config = examples(
        {"startNodeId": "file:src/checkout/payment.ts", "maxDepth": 2},
        {"query": "payment", "nodeType": "concept", "limit": 20},
    )

    # Named as the graph's query takes them: the body is the query.
    start: Annotated[
        str | None,
        Field(alias="startNodeId", min_length=1, max_length=400, description="`kind:key`"),
    ] = None
    kind: Annotated[NodeType | None, Field(alias="nodeType")] = None
    depth: Annotated[int, Field(alias="maxDepth", ge=0, le=MAX_DEPTH)] = 2
    text: Annotated[str | None, Field(alias="query", max_length=200)] = None
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 50
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0


@router.post(
    "/graph/query",
    summary="Nodes and the edges among them: a walk, a name, a kind",
    **answer("The nodes and edges", schemas.GraphSlice),
)
async def query(memory: Served, body: QueryBody) -> dict[str, Any]:
    found = await run_in_threadpool(memory.graph.query, **dict(body))
    return present.graph_slice(found, limit=body.limit, offset=body.offset)


@router.get(
    "/graph/stats",
    summary="Nodes per type and edges per relation",
    **answer("The counts", schemas.GraphStats),
)
async def stats(memory: Served) -> dict[str, Any]:
    return present.graph_stats(await run_in_threadpool(memory.graph.stats))


@router.post(
    "/graph/reset",
    summary="Empty the graph; the pipeline fills it again",
    **answer("What was cleared", schemas.GraphCleared),
)
async def reset(memory: Served) -> dict[str, Any]:
    return present.graph_cleared(await run_in_threadpool(memory.graph.reset))
