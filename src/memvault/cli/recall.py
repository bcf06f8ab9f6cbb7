"""``memvault search | get | maintain | reindex | rebuild``: reading and keeping up memory.

Each asks the running server when one runs for this memory (``cli/reach.py``), and opens
the memory in this process only when none does; what is printed is the same either way.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memvault.cli import remote
from memvault.cli.reach import errors, fail, open_memory, server

console = Console(soft_wrap=True)


class Kind(StrEnum):
    """The kinds of memory a search finds (``memvault.domain.DOCUMENT_KINDS``)."""

    fragment = "fragment"
    summary = "summary"
    observation = "observation"


def search(
    query: Annotated[str, typer.Argument(help='Words, "a phrase", or a prefix*.')],
    limit: Annotated[int, typer.Option(min=1, max=100, help="How many results.")] = 10,
    project: Annotated[str | None, typer.Option(help="Only this project's memory.")] = None,
    kind: Annotated[
        list[Kind] | None,
        typer.Option("--kind", help="fragment, summary or observation (repeat)."),
    ] = None,
    archived: Annotated[bool, typer.Option("--archived", help="Include archived.")] = False,
    relevance_only: Annotated[
        bool, typer.Option("--relevance-only", help="Ignore importance and recency.")
    ] = False,
    semantic: Annotated[
        bool,
        typer.Option(
            "--semantic",
            help="With no server running, load the embedding model here to search by "
            "meaning too (seconds); without it such a search is by words only.",
        ),
    ] = False,
    lexical: Annotated[bool, typer.Option("--lexical", hidden=True)] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print results as JSON.")] = False,
) -> None:
    """Search fragments, session summaries and observations. With a server running it
    answers, by meaning too when its model is loaded; without one, this command searches
    by words unless given --semantic."""
    running = server()
    if running is not None:
        body = {
            "query": query,
            "limit": limit,
            "project": project,
            "kinds": [k.value for k in kind] if kind else None,
            "includeArchived": archived,
            "ranking": "relevance" if relevance_only else "default",
        }
        try:
            found = running.post("/search", body)["results"]
        except remote.ServerRefused as exc:
            if exc.status != 400:
                raise
            fail(exc.error, 2)
    else:
        found = _search_here(
            query,
            limit,
            project,
            [k.value for k in kind or []],
            archived,
            relevance_only,
            semantic and not lexical,
        )
    rows = [
        {
            "kind": h["kind"],
            "id": h["id"],
            "title": h["title"],
            "summary": h["summary"],
            "score": round(h["score"], 4),
            "relevance": round(h["relevance"], 4),
            "importance": round(h["importance"], 4),
            "recency": round(h["recency"], 4),
            "eventIds": h["eventIds"],
            "path": h.get("path"),
        }
        for h in found
    ]
    if as_json:
        console.print_json(json.dumps({"query": query, "results": rows}, ensure_ascii=False))
        return
    if not rows:
        console.print(
            f"nothing found for {escape(query)!r}. Memory fills as connected editors work "
            "(`memvault install claude-code` or `cursor`), from past conversations "
            "(`memvault import claude-code` or `cursor`), and with `memvault save`.",
            soft_wrap=True,
        )
        return
    # Ids are copied into `memvault get`: shown whole, never cut; the summary gives way,
    # and a terminal too narrow for a table gets each hit on two lines instead.
    longest = max(len(row["id"]) for row in rows)
    if console.width < longest + _TABLE_BESIDE_ID:
        for row in rows:
            scores = f"{row['relevance']:.2f} / {row['importance']:.2f} / {row['recency']:.2f}"
            console.print(
                f"{row['score']:.3f}  {row['kind']}  [bold]{escape(row['id'])}[/]",
                soft_wrap=True,
                highlight=False,
            )
            console.print(
                f"    {escape(row['summary'] or row['title'])}  ({scores})", highlight=False
            )
        return
    table = Table("Score", "Kind", "Id", "Summary", "rel / imp / rec")
    for column in table.columns[:3]:
        column.no_wrap = True
    table.columns[2].min_width = longest
    table.columns[3].overflow = "fold"
    for row in rows:
        table.add_row(
            f"{row['score']:.3f}",
            row["kind"],
            escape(row["id"]),
            escape(row["summary"] or row["title"]),
            f"{row['relevance']:.2f} / {row['importance']:.2f} / {row['recency']:.2f}",
        )
    console.print(table)


_TABLE_BESIDE_ID = 60  # the other columns' room, with the table's borders


def _search_here(
    query: str,
    limit: int,
    project: str | None,
    kinds: list[str] | None,
    archived: bool,
    relevance_only: bool,
    semantic: bool,
) -> list[dict[str, Any]]:
    """The hits of a search in this process, as the server's route gives them."""
    from memvault.errors import InvalidInput
    from memvault.search.ranking import RELEVANCE_ONLY

    with open_memory() as memory:
        if semantic:
            if not memory.recall.has_semantic:
                errors.print(
                    "[yellow]semantic search unavailable[/]: no embedding model is configured "
                    "(MEMVAULT_EMBEDDINGS)"
                )
            else:
                try:
                    memory.recall.warm_semantic()
                except Exception as exc:  # the model or endpoint is unavailable: words only
                    errors.print(f"[yellow]semantic search unavailable[/]: {escape(str(exc))}")
        try:
            hits = memory.recall.search(
                query,
                limit=limit,
                project=project,
                kinds=kinds or None,
                include_archived=archived,
                weights=RELEVANCE_ONLY if relevance_only else None,
            )
        except InvalidInput as exc:
            fail(exc.message, 2)
        return [
            {
                "kind": h.document.kind,
                "id": memory.recall.public_id(h.document),
                "title": h.document.title,
                "summary": h.document.summary,
                "score": h.score,
                "relevance": h.relevance,
                "importance": h.importance,
                "recency": h.recency,
                "eventIds": h.document.event_ids,
                "path": h.document.path,
            }
            for h in hits
        ]


def get(
    memory_id: Annotated[str, typer.Argument(help="A fragment, summary or observation id.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Read one memory whole (a fragment's facts, a session's snapshot, an observation)."""
    running = server()
    if running is not None:
        try:
            shown = running.get(f"/memories/{remote.path_part(memory_id)}")["memory"]
        except remote.ServerRefused as exc:
            if exc.status != 404:
                raise
            shown = None
    else:
        with open_memory() as memory:
            entry = memory.recall.get(memory_id)
            shown = None
            if entry is not None:
                document = entry.document
                shown = {
                    "kind": document.kind,
                    "id": entry.id,
                    "title": document.title,
                    "summary": document.summary,
                    "project": document.project,
                    "path": document.path,
                    "body": entry.body,
                }
    if shown is None:
        errors.print(f"[red]no memory {escape(memory_id)!r}[/]")
        raise typer.Exit(1)
    keys = ("kind", "id", "title", "summary", "project", "path", "body")
    shown = {key: shown.get(key) for key in keys}
    if as_json:
        console.print_json(json.dumps(shown, ensure_ascii=False, default=str))
        return
    console.print(f"[bold]{escape(shown['title'])}[/] ({shown['kind']}, {escape(shown['id'])})")
    body = shown["body"] or ""
    first, _, rest = body.partition("\n")
    if shown["title"] and first.strip() == shown["title"].strip():
        body = rest  # an observation's body opens with its title, printed just above
    # An observation's summary is its title or its narrative, which the body holds
    # already: each text is printed once.
    summary = " ".join((shown["summary"] or "").split())
    said = (" ".join((shown["title"] or "").split()), " ".join(body.split()))
    if summary and summary != said[0] and summary not in said[1]:
        console.print(escape(shown["summary"]))
    console.print(escape(body))


def maintain(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would change.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Archive unused low-importance fragments; write L2 summaries of large projects."""
    running = server()
    if running is not None:
        shown = running.post("/maintain", {"dryRun": dry_run}, seconds=remote.LONG_SECONDS)
    else:
        with open_memory() as memory:
            report = memory.fragments.maintain(dry_run=dry_run)
        shown = {"dryRun": dry_run, "archived": report.archived, "summarized": report.summarized}
    if as_json:
        console.print_json(json.dumps(shown, ensure_ascii=False))
        return
    verb = "would archive" if dry_run else "archived"
    console.print(f"{verb} {len(shown['archived'])} fragment(s)")
    for name in shown["archived"]:
        console.print(f"  {escape(name)}")
    verb = "would summarize" if dry_run else "summarized"
    console.print(f"{verb} {len(shown['summarized'])} project(s)")
    for name in shown["summarized"]:
        console.print(f"  {escape(name)}")


def reindex() -> None:
    """Bring the search index up to date with the vault and the event log now (with no
    server running, this loads the embedding model, if one is configured, to embed)."""
    running = server()
    if running is not None:
        done = running.post("/reindex", seconds=remote.LONG_SECONDS)["documents"]
    else:
        with open_memory() as memory:
            done = memory.index.index_now()
    console.print(f"{done} document(s) indexed or updated")


def rebuild(
    offline: Annotated[
        bool, typer.Option("--offline", help="Leave the configured LLM out (extractive).")
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Run although a server answers at the configured URL."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Re-derive observations, summaries, pipeline-written fragments, the graph and the
    index from the raw event log. Fragments written by agents or people, and pipeline
    fragments edited since, are kept. Stop the server and workers first: it refuses
    while a server runs for this memory, which would be a second writer."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    if not force:
        try:
            running = remote.find()
        except remote.NotAnswering as exc:
            fail(f"{exc}; rebuild would be a second writer of this memory")
        except remote.OtherMemory as exc:
            fail(f"{exc}; pass --force to rebuild this environment's memory beside it", code=2)
        if running is not None:
            errors.print(
                f"[red]a memvault server answers at {escape(running.url)}; stop it "
                "(`memvault stop`, and any `memvault worker`) first, or pass --force if it "
                "serves another memory[/]"
            )
            raise typer.Exit(1)
    columns = (TextColumn("{task.description:<13}"), BarColumn(), MofNCompleteColumn())
    with (
        open_memory() as memory,
        Progress(*columns, console=console, disable=as_json, transient=False) as bar,
    ):
        tasks: dict[str, int] = {}

        def tell(step: str, done: int, total: int | None) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total)
            bar.update(tasks[step], completed=done, total=total)

        report = memory.rebuild.run(offline=offline, progress=tell)
    shown = {
        "events": report.events,
        "observationsChanged": report.observations_changed,
        "sessions": report.sessions,
        "summaries": report.summaries,
        "fragmentsRemoved": report.fragments_removed,
        "fragmentsKept": report.fragments_kept,
        "fragmentsWritten": report.fragments_written,
        "graphEvents": report.graph_events,
        "documents": report.documents,
    }
    if as_json:
        console.print_json(json.dumps(shown))
        return
    console.print(
        f"rebuilt {report.sessions} session(s) from {report.events} event(s): "
        f"{report.observations_changed} observation(s) changed, {report.summaries} summary "
        f"run(s), {report.fragments_written} fragment write(s) ({report.fragments_removed} "
        f"removed first, {report.fragments_kept} edited by hand and kept), "
        f"{report.documents} document(s) indexed"
    )
