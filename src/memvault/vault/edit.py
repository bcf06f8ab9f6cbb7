"""Editing a fragment: change the fields a person or an agent names in one existing file.

The file is read afresh under the fragments folder's lock, so whatever a person changed
in it since stays, and only the properties and fact lines asked for are rewritten; the
write is atomic and verified, and the file as it was comes back if it does not read back
as meant.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.vault import frontmatter
from memvault.vault.files import memory_lock, read_text, write_atomic
from memvault.vault.fragments import TAG, Fragment
from memvault.vault.remember import (
    FragmentRefused,
    fact_key,
    fact_problems,
    fact_text,
    facts_from,
    is_fact_line,
    link_problems,
    normal_tags,
    tag_list,
    tag_problems,
    verify_facts,
)


@dataclass(slots=True)
class Edit:
    """What to change in one fragment; every field left as None (or empty) stays as it is.

    ``facts`` replaces every fact line; ``add_facts`` and ``remove_facts`` change only
    those lines. ``tags`` replaces the tags (``agent-memory`` always stays);
    ``add_tags`` and ``remove_tags`` change only those."""

    summary: str | None = None
    facts: list[str] | None = None
    add_facts: list[str] = field(default_factory=list)
    remove_facts: list[str] = field(default_factory=list)
    importance: float | None = None
    tags: list[str] | None = None
    add_tags: list[str] = field(default_factory=list)
    remove_tags: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return (
            self.summary is None
            and self.facts is None
            and self.importance is None
            and self.tags is None
            and not (self.add_facts or self.remove_facts or self.add_tags or self.remove_tags)
        )


def check_edit(edit: Edit) -> None:
    """``FragmentRefused`` naming every problem of ``edit``."""
    problems = []
    if edit.empty:
        problems.append("nothing to change: give a summary, facts, importance or tags")
    if edit.summary is not None and not edit.summary.strip():
        problems.append("summary must not be empty (one sentence)")
    if edit.facts is not None and not edit.facts:
        problems.append("facts must not be empty: a fragment keeps at least one fact")
    problems += fact_problems([*(edit.facts or []), *edit.add_facts, *edit.remove_facts])
    problems += link_problems([edit.summary or "", *(edit.facts or []), *edit.add_facts])
    if edit.importance is not None and not 0 <= edit.importance <= 1:
        problems.append(f"importance must be from 0 to 1, not {edit.importance}")
    problems += tag_problems([*(edit.tags or []), *edit.add_tags, *edit.remove_tags])
    if problems:
        raise FragmentRefused("; ".join(problems))


def read_to_change(path: Path) -> tuple[str, Fragment]:
    """A fragment's text and what it says, read afresh to be changed (under the folder's
    lock): ``FileNotFoundError`` when it is not there, ``FragmentRefused`` when its
    frontmatter cannot be read."""
    text = read_text(path)
    if text is None:
        raise FileNotFoundError(path)
    try:
        return text, Fragment.read(path)
    except (UnicodeDecodeError, frontmatter.FrontmatterError) as exc:
        raise FragmentRefused(f"{path.name} cannot be read ({exc}): fix it by hand") from None


def edit_fragment(folder: Path, path: Path, edit: Edit) -> None:
    """Change the fields ``edit`` names in the fragment at ``path`` (inside ``folder``),
    under the folder's lock: the file is read afresh there, so whatever a person changed
    in it since stays, and only the properties and fact lines asked for are rewritten.
    The write is atomic and verified (the file as it was comes back if it does not read
    back as meant). ``FragmentRefused`` when the edit breaks a rule or would leave the
    fragment without facts; ``FileNotFoundError`` when the file is not there."""
    check_edit(edit)
    with memory_lock(folder):
        text, fragment = read_to_change(path)
        changes = _property_changes(fragment.properties, edit)
        newline = "\r\n" if "\r\n" in text else "\n"
        body, facts = _edited_body(fragment.body, edit, newline)
        updated = frontmatter.with_properties(text, changes) if changes else text
        if body is not None:
            updated = frontmatter.replace_body(updated, body)
        if updated == text:
            return
        write_atomic(path, updated)
        try:
            verify_facts(path, facts)
            _verify_properties(path, changes)
        except BaseException:
            write_atomic(path, text)
            raise


def _property_changes(props: dict[str, Any], edit: Edit) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if edit.summary is not None:
        summary = " ".join(edit.summary.split())
        if summary != props.get("summary"):
            changes["summary"] = summary
    if edit.importance is not None and edit.importance != props.get("importance"):
        changes["importance"] = edit.importance
    if edit.tags is not None or edit.add_tags or edit.remove_tags:
        current = tag_list(props.get("tags"))
        tags = [TAG, *normal_tags(edit.tags)] if edit.tags is not None else current
        removed = set(normal_tags(edit.remove_tags)) - {TAG}
        tags = [t for t in dict.fromkeys([*tags, *normal_tags(edit.add_tags)]) if t not in removed]
        if tags != current or not isinstance(props.get("tags"), list):
            changes["tags"] = tags
    return changes


def _edited_body(body: str, edit: Edit, newline: str) -> tuple[str | None, list[str]]:
    """The new body (None when the facts do not change) and the facts it must hold."""
    existing = facts_from(body)
    if edit.facts is None and not edit.add_facts and not edit.remove_facts:
        return None, existing
    lines = body.split("\n")
    if edit.facts is not None:
        # Only the fact lines are replaced: a person's headings and blank lines stay.
        lines = [line for line in lines if not is_fact_line(line)]
        wanted = list(dict.fromkeys(edit.facts))
    else:
        removing = {_line_key(fact) for fact in edit.remove_facts}
        present = {fact_key(fact) for fact in existing}
        missing = [fact for fact in edit.remove_facts if _line_key(fact) not in present]
        if missing:
            raise FragmentRefused(f"no such fact to remove: {', '.join(map(repr, missing))}")
        lines = [line for line in lines if not (is_fact_line(line) and _line_key(line) in removing)]
        wanted = []
    known = {_line_key(line) for line in lines if is_fact_line(line)}
    added = []
    for fact in [*wanted, *edit.add_facts]:
        if _line_key(fact) not in known:
            known.add(_line_key(fact))
            added.append(fact_text(fact))
    kept = "\n".join(lines).rstrip("\r\n")
    new_body = (kept + newline if kept else "") + newline.join(f"- {fact}" for fact in added)
    facts = facts_from(new_body)
    if not facts:
        raise FragmentRefused("the edit would leave the fragment without facts")
    return new_body + newline, facts


def _line_key(line: str) -> str:
    return fact_key(fact_text(line))


def _verify_properties(path: Path, changes: dict[str, Any]) -> None:
    written = Fragment.read(path).properties
    wrong = [
        name
        for name, value in changes.items()
        if written.get(name) != (value.isoformat() if isinstance(value, dt.date) else value)
    ]
    if wrong:
        raise OSError(f"could not verify {path.name}: {', '.join(wrong)} did not read back")
