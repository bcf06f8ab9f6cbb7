"""``memvault save`` and ``memvault fragments …``: the memory fragments in your vault.

Saving, editing and deleting go through the running server when one runs for this
memory, and are done in this process only when none does; ``check`` reads the files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memvault.cli import reach, remote
from memvault.cli.reach import errors, open_memory, server

console = Console(soft_wrap=True)
fragments_app = typer.Typer(help="Memory fragments in your vault.", no_args_is_help=True)


@contextmanager
def _refused(verb: str) -> Iterator[None]:
    """A refused fragment (exit 2) or a folder that cannot be written (exit 1), said in one
    line: ``not saved: …``."""
    from memvault.errors import InvalidInput

    try:
        yield
    except InvalidInput as exc:
        errors.print(f"[red]not {verb}[/]: {escape(exc.message)}")
        raise typer.Exit(2) from None
    except remote.ServerRefused as exc:  # the server's words for the same refusal
        if exc.status != 400:
            raise
        errors.print(f"[red]not {verb}[/]: {escape(exc.error)}")
        raise typer.Exit(2) from None
    except OSError as exc:
        errors.print(f"[red]not {verb}[/]: {escape(str(exc))}")
        raise typer.Exit(1) from None


@fragments_app.command("check")
def check(
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
) -> None:
    """Report fragment files that break the rules (exit 1 if any has an error)."""
    from memvault.vault.fragments import CheckReport, check_folder

    settings = reach.settings()  # the files alone are read: no store, no server needed
    folder = settings.fragments_path
    report = check_folder(folder, root=settings.vault_path) if folder.is_dir() else CheckReport()
    if as_json:
        console.print_json(
            json.dumps(
                {"files": report.files, "problems": [p.to_dict() for p in report.problems]},
                ensure_ascii=False,
            )
        )
    elif not report.problems:
        console.print(f"{report.files} fragment file(s) in {folder}: all follow the rules")
    else:
        table = Table("File", "Severity", "Rule", "What to do")
        for p in report.problems:
            colour = "red" if p.severity == "error" else "yellow"
            table.add_row(escape(p.path), f"[{colour}]{p.severity}[/]", p.rule, escape(p.message))
        console.print(table)
        console.print(
            f"{report.files} file(s) checked: {len(report.errors)} error(s), "
            f"{len(report.problems) - len(report.errors)} warning(s)"
        )
    if report.errors:
        raise typer.Exit(1)


def save(
    project: Annotated[str, typer.Option(help="The project the memory belongs to.")],
    summary: Annotated[str, typer.Option(help="One sentence: what a search shows first.")],
    fact: Annotated[
        list[str] | None, typer.Option("--fact", help='A fact line, e.g. "why: …" (repeat).')
    ] = None,
    file: Annotated[
        typer.FileText | None, typer.Option("--file", help="Facts as markdown lines.")
    ] = None,
    importance: Annotated[float, typer.Option(min=0, max=1, help="0 to 1.")] = 0.5,
    confidence: Annotated[float | None, typer.Option(min=0, max=1, help="0 to 1.")] = None,
    source: Annotated[str | None, typer.Option(help="Where it comes from.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeat).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Remember something: a new fragment, or merged into a near-duplicate of its project."""
    from memvault.vault.remember import Draft, facts_from

    facts = list(fact or []) + (facts_from(file.read()) if file else [])
    # The fields of a draft, under the names /remember takes too.
    given = {"project": project, "summary": summary, "facts": facts, "tags": list(tag or [])}
    given |= {"importance": importance, "confidence": confidence, "source": source}
    draft = Draft(**given)
    running = server()
    if running is not None:
        with _refused("saved"):
            answer = running.post("/remember", given)
        shown = {key: answer[key] for key in ("action", "path", "similarity")}
    else:
        with open_memory() as memory:
            with _refused("saved"):
                result = memory.fragments.remember(draft)
            shown = result.to_dict(memory.settings.vault_path)
    if as_json:
        console.print_json(json.dumps(shown, ensure_ascii=False))
    elif shown["action"] == "merged":
        console.print(f"merged into {shown['path']} (similarity {shown['similarity']})")
    else:
        console.print(f"created {shown['path']}")


@fragments_app.command("edit")
def edit(
    fragment_id: Annotated[str, typer.Argument(metavar="ID", help="The fragment's id.")],
    summary: Annotated[str | None, typer.Option(help="The new one sentence.")] = None,
    fact: Annotated[
        list[str] | None, typer.Option("--fact", help="A fact line to add (repeat).")
    ] = None,
    replace_facts: Annotated[
        bool, typer.Option("--replace-facts", help="The --fact lines replace every fact.")
    ] = False,
    remove_fact: Annotated[
        list[str] | None,
        typer.Option("--remove-fact", help="A fact line to remove, as written (repeat)."),
    ] = None,
    importance: Annotated[float | None, typer.Option(min=0, max=1, help="0 to 1.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag to add (repeat).")] = None,
    remove_tag: Annotated[
        list[str] | None, typer.Option("--remove-tag", help="A tag to remove (repeat).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Change a fragment's summary, facts, importance or tags; the rest of its file stays."""
    if replace_facts and not fact:
        errors.print("[red]not edited[/]: --replace-facts needs the new facts as --fact")
        raise typer.Exit(2)
    changes: dict[str, Any] = {
        "summary": summary,
        "facts": list(fact or []) if replace_facts else None,
        "addFacts": [] if replace_facts else list(fact or []),
        "removeFacts": list(remove_fact or []),
        "importance": importance,
        "addTags": list(tag or []),
        "removeTags": list(remove_tag or []),
    }
    running = server()
    if running is not None:
        with _refused("edited"):
            entry = running.call("PATCH", _fragment(fragment_id), body=changes)["memory"]
        shown = {key: entry[key] for key in ("id", "properties", "body")}
    else:
        from memvault.vault.edit import Edit

        edit = Edit(
            summary=summary,
            facts=changes["facts"],
            add_facts=changes["addFacts"],
            remove_facts=changes["removeFacts"],
            importance=importance,
            add_tags=changes["addTags"],
            remove_tags=changes["removeTags"],
        )
        with open_memory() as memory, _refused("edited"):
            edited = memory.fragments.edit_fragment(fragment_id, edit)
        shown = {"id": edited.id, "properties": edited.properties, "body": edited.body}
    if as_json:
        console.print_json(json.dumps(shown, ensure_ascii=False))
    else:
        console.print(f"edited {escape(shown['id'])}")


@fragments_app.command("delete")
def delete(
    fragment_id: Annotated[str, typer.Argument(metavar="ID", help="The fragment's id.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Delete a fragment's file and what memvault derived from it."""
    running = server()
    if running is not None:
        with _refused("deleted"):
            if not yes:  # the id is checked before the question is asked
                running.call("DELETE", _fragment(fragment_id), query={"dryRun": True})
                typer.confirm(f"Delete the fragment {fragment_id!r}?", abort=True)
            answer = running.call("DELETE", _fragment(fragment_id))
        shown = {key: answer[key] for key in ("id", "path", "summary")}
    else:
        with open_memory() as memory, _refused("deleted"):
            memory.fragments.fragment_path(fragment_id)
            if not yes:
                typer.confirm(f"Delete the fragment {fragment_id!r}?", abort=True)
            deleted = memory.fragments.delete_fragment(fragment_id)
        shown = {"id": deleted.id, "path": deleted.path, "summary": deleted.summary}
    if as_json:
        console.print_json(json.dumps(shown, ensure_ascii=False))
    else:
        console.print(f"deleted {escape(shown['path'])}")


def _fragment(fragment_id: str) -> str:
    return f"/fragments/{remote.path_part(fragment_id)}"
