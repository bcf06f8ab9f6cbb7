"""``memvault graph …``: the entity graph sessions and fragments build."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memvault.cli.board import errors, open_memory
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
    with open_memory() as memory:
        shown = memory.store.graph_stats().to_dict()
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
    with open_memory() as memory:
        found = memory.store.graph_query(
            start=start, kind=kind, text=text, depth=depth, limit=limit
        )
    nodes = [n.to_dict() for n in found.nodes]
    edges = [e.to_dict() for e in found.edges]
    if as_json:
        shown = {"nodes": nodes, "edges": edges, "truncated": found.truncated}
        console.print_json(json.dumps(shown, ensure_ascii=False))
        return
    if not nodes:
        console.print("nothing found")
        return
    console.print(_nodes_table(nodes))
    if edges:
        console.print(_edges_table(edges))
    if found.truncated:
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
    with open_memory() as memory:
        cleared = memory.store.reset_graph()
        memory.pipeline.regraph_fragments()
    console.print(
        f"graph emptied: {cleared.total_nodes} node(s) and {cleared.total_edges} edge(s) "
        "removed; sessions and fragments are queued to be read again by the server's "
        "pipeline (`memvault serve`)"
    )
