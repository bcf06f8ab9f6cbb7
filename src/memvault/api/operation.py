"""What every group of routes is declared with: its router, the memory a request is served
by, the base of request bodies, and what an operation says in the OpenAPI document (its
answer, its links, a body read by hand)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from memvault.api.guards import DecodedBodyRoute
from memvault.memory import Memory

# The furthest a listing pages: past any real store, and inside SQLite's 64-bit integers.
MAX_OFFSET = 10**12

Answers = dict[int | str, dict[str, Any]]


def routes(prefix: str, tag: str | None = None) -> APIRouter:
    """A group's router; its routes decode a body as every body memvault reads is."""
    return APIRouter(prefix=prefix, tags=[tag] if tag else None, route_class=DecodedBodyRoute)


def memory_of(request: Request) -> Memory:
    """The memory the app serves, for a route that reads the request itself."""
    return request.app.state.memory


async def _served(request: Request) -> Memory:  # async: resolved on the loop, not a thread
    return memory_of(request)


# The memory the app serves, as a route's parameter.
Served = Annotated[Memory, Depends(_served)]
# An older fragment's id that a saved or edited one replaces (``remember``, ``edit``).
Supersedes = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=500,
        description="An older fragment's id this one replaces: it is marked [superseded]",
    ),
]


class Body(BaseModel):
    """A request body that ignores keys it does not know (agentmemory's clients send more)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class StrictBody(BaseModel):
    """A request body that refuses keys it does not know."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def examples(*given: dict[str, Any]) -> ConfigDict:
    """A body's examples, for the document (and for generated requests)."""
    return ConfigDict(json_schema_extra={"examples": list(given)})


def answer(description: str, model: Any, *more: Answers, status: int = 200) -> dict[str, Any]:
    """The ``response_model`` and ``responses`` of a route that answers ``model`` (a dict
    the route shapes, which the model only describes) with ``status``, and ``more``."""
    responses: Answers = {status: {"description": description, "model": model}}
    for answers in more:
        responses.update(answers)
    return {"response_model": None, "responses": responses}


def link(
    method: str,
    path: str,
    *,
    parameters: dict[str, str] | None = None,
    request_body: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An OpenAPI link from an answer to the operation ``method path``: which of the
    answer's values that operation takes, for clients and for stateful testing."""
    pointer = path.replace("~", "~0").replace("/", "~1")
    target: dict[str, Any] = {"operationRef": f"#/paths/{pointer}/{method}"}
    if parameters:
        target["parameters"] = parameters
    if request_body:
        target["requestBody"] = request_body
    return target


def request_body(content: dict[str, Any], required: bool = True) -> dict[str, Any]:
    """The ``openapi_extra`` of a route that reads its body by hand: ``content`` by media
    type."""
    return {"requestBody": {"required": required, "content": content}}


def json_body(schema: dict[str, Any], *given: Any, required: bool = True) -> dict[str, Any]:
    """The same, for a JSON body of ``schema`` (with examples, when given)."""
    if given:
        schema = {**schema, "examples": list(given)}
    return request_body({"application/json": {"schema": schema}}, required)


def model_body(model: type[BaseModel], required: bool = True) -> dict[str, Any]:
    """The same, for a body a model describes (a route that reads it by hand)."""
    return json_body(model.model_json_schema(by_alias=True), required=required)
