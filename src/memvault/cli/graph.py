"""``memvault graph …``: the entity graph sessions and fragments build, asked of the
running server when one runs for this memory, read in this process when none does."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memvault.cli import remote
from memvault.cli.reach import errors, fail, open_memory, server
from memvault.graph.model import KINDS, MAX_DEPTH, MAX_LIMIT

console = Console(soft_wrap=True)
graph_app = typer.Typer(
    help="The entity graph: files, functions, libraries, errors, concepts, decisions.",
    no_args_is_help=True,
)


@graph_app.command("stats")
def stats(
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
) -> None:
    """How many nodes of each type and edges of each relation the graph holds."""
    running = server()
    if running is not None:
        shown = running.get("/graph/stats")
        shown.pop("success", None)
    else:
        with open_memory() as memory:
            shown = memory.graph.stats().to_dict()
    if as_json:
        console.print_json(json.dumps(shown, ensure_ascii=False))
        return
    console.print(f"{shown['totalNodes']} node(s), {shown['totalEdges']} edge(s)")
    for title, counts in (("Type", shown["nodesByType"]), ("Relation", shown["edgesByType"])):
        if counts:
            table = Table(title, "Count")
            for name, count in counts.items():
                table.add_row(name, str(count))
            console.print(table)


@graph_app.command("query")
def query(
    text: Annotated[
        str | None, typer.Argument(help="Part of a name (3+ characters match anywhere).")
    ] = None,
    kind: Annotated[
        str | None, typer.Option("--type", help=f"Only this type: {', '.join(KINDS)}.")
    ] = None,
    start: Annotated[
        str | None,
        typer.Option("--start", help="Walk from this node: type:name, e.g. file:src/app.py."),
    ] = None,
    depth: Annotated[int, typer.Option(min=0, max=MAX_DEPTH, help="Hops from --start.")] = 2,
    limit: Annotated[int, typer.Option(min=1, max=MAX_LIMIT, help="How many nodes.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print nodes and edges as JSON.")] = False,
) -> None:
    """Nodes and the edges among them: near a node, named like TEXT, or the most mentioned."""
    if kind is not None and kind not in KINDS:
        errors.print(f"[red]--type must be one of {', '.join(KINDS)}, not {escape(kind)!r}[/]")
        raise typer.Exit(2)
    running = server()
    if running is not None:
        body = {"startNodeId": start, "nodeType": kind, "query": text}
        body |= {"maxDepth": depth, "limit": limit}
        try:
            answer = running.post("/graph/query", {k: v for k, v in body.items() if v is not None})
        except remote.ServerRefused as exc:
            if exc.status != 400:
                raise
            fail(exc.error, 2)
        nodes, edges, truncated = answer["nodes"], answer["edges"], answer["truncated"]
    else:
        from memvault.errors import InvalidInput

        with open_memory() as memory:
            try:
                found = memory.graph.query(
                    start=start, kind=kind, text=text, depth=depth, limit=limit
                )
            except InvalidInput as exc:
                fail(exc.message, 2)
        nodes = [n.to_dict() for n in found.nodes]
        edges = [e.to_dict() for e in found.edges]
        truncated = found.truncated
    if as_json:
        shown = {"nodes": nodes, "edges": edges, "truncated": truncated}
        console.print_json(json.dumps(shown, ensure_ascii=False))
        return
    if not nodes:
        console.print("nothing found")
        return
    console.print(_nodes_table(nodes))
    if edges:
        console.print(_edges_table(edges))
    if truncated:
        console.print("[dim]more exists: raise --limit, or narrow with --type or TEXT[/]")


def _nodes_table(nodes: list[dict[str, Any]]) -> Table:
    table = Table("Type", "Name", "Mentions", "Last seen")
    for node in nodes:
        props = node["properties"]
        table.add_row(
            node["type"], escape(node["name"]), str(props["mentions"]), props["lastSeen"][:10]
        )
    return table


def _edges_table(edges: list[dict[str, Any]]) -> Table:
    table = Table("From", "Relation", "To", "Weight")
    for edge in edges:
        table.add_row(
            escape(edge["sourceNodeId"]),
            edge["type"],
            escape(edge["targetNodeId"]),
            str(edge["weight"]),
        )
    return table


@graph_app.command("reset")
def reset(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Empty the graph; the pipeline fills it again from the event log and the vault."""
    if not yes:
        typer.confirm("Empty the entity graph?", abort=True)
    running = server()
    if running is not None:
        cleared = running.post("/graph/reset")["cleared"]
    else:
        with open_memory() as memory:
            cleared = memory.graph.reset().to_dict()
    console.print(
        f"graph emptied: {cleared['totalNodes']} node(s) and {cleared['totalEdges']} edge(s) "
        "removed; sessions and fragments are queued to be read again by the server's "
        "pipeline (`memvault serve`)"
    )
