"""Writing fragments: create a new one, or merge into the same project's near-duplicate.

Before a fragment is written, the project's fragments are compared with it (``likeness``
in :mod:`memvault.vault.likeness`, or a semantic score when vectors exist). Above the
threshold (0.8 by default) the new facts are merged into the existing file (union of
facts and tags, the higher importance and confidence, today's date, every source kept)
instead of creating a near-copy. This module also owns what a draft is, the rules a
fragment's fields keep, and a body read as fact lines. All of it happens under the
fragments folder's lock, so concurrent writers never lose an update, and every write is
atomic and verified. Changing an existing fragment's fields is :mod:`memvault.vault.edit`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.vault import frontmatter
from memvault.vault.files import memory_lock, read_text, write_atomic
from memvault.vault.fragments import (
    FORBIDDEN_FIELDS,
    SUPERSEDED_BY,
    SUPERSEDED_ON,
    TAG,
    WIKILINK,
    Fragment,
    fragment_name,
    free_path,
    live_fragment_files,
    tag_name,
)
from memvault.vault.likeness import comparable, conflict, likeness

DEFAULT_THRESHOLD = 0.8
MANAGED = frozenset(
    {
        *("tags", "project", "date", "summary", "importance", "confidence", "source", "sources"),
        *(SUPERSEDED_BY, SUPERSEDED_ON),  # set by `supersedes`, naming a real fragment
    }
)
_FACT = re.compile(r"^\s*[-*] ")


# Scores a draft's text against each fragment; None to fall back to lexical similarity.
Similarity = Callable[[str, list[Fragment]], list[float] | None]


class FragmentRefused(ValueError):
    """The fragment breaks a rule; nothing was written."""


@dataclass(slots=True)
class Draft:
    """What to remember: a one-sentence summary and the facts behind it."""

    project: str
    summary: str
    facts: list[str]
    importance: float = 0.5
    confidence: float | None = None
    source: str | None = None
    tags: list[str] = field(default_factory=list)
    date: str | None = None  # YYYY-MM-DD; today when not given
    description: str | None = None  # for the file name; the summary when not given
    properties: dict[str, Any] = field(default_factory=dict)  # anything else to keep


@dataclass(slots=True)
class Remembered:
    action: str  # "created" | "merged"
    path: Path
    similarity: float | None = None  # to the fragment merged into, or the closest one

    def to_dict(self, root: Path) -> dict[str, Any]:
        return {
            "action": self.action,
            "path": self.path.relative_to(root).as_posix(),  # the same on Windows
            "similarity": None if self.similarity is None else round(self.similarity, 4),
        }


@dataclass(slots=True)
class DerivedFragment:
    """What the vault's owner answers for a fragment the pipeline wrote: ``Remembered``
    with the path inside the vault, and the file's hash before a merge into it and after
    the write, both taken under the folder's lock (the pipeline's claim on the file)."""

    action: str
    path: str  # inside the vault, with forward slashes
    similarity: float | None
    before: str | None
    after: str | None


def facts_from(body: str) -> list[str]:
    """A body as fact lines: list items as they are, other lines made into items; title
    headings and report-style headings dropped (the file name is the title)."""
    return [fact_text(line) for line in body.split("\n") if is_fact_line(line)]


def is_fact_line(line: str) -> bool:
    """Any line but a blank one or a heading holds a fact."""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def fact_text(line: str) -> str:
    """A fact line without its list marker (``- x`` is the fact ``x``)."""
    stripped = line.strip()
    return _FACT.sub("", stripped) if _FACT.match(stripped) else stripped


def fact_key(fact: str) -> str:
    """What two facts are compared by: their words, lowercased."""
    return " ".join(fact.lower().split())


def check_draft(draft: Draft) -> None:
    problems = []
    if not draft.project.strip():
        problems.append("project is required")
    if not draft.summary.strip():
        problems.append("summary is required (one sentence)")
    if not draft.facts:
        problems.append("at least one fact is required")
    problems += fact_problems(draft.facts)
    problems += tag_problems(draft.tags)
    problems += property_problems(draft.properties)
    problems += link_problems([draft.summary, *draft.facts])
    for name, value in (("importance", draft.importance), ("confidence", draft.confidence)):
        if value is not None and not 0 <= value <= 1:
            problems.append(f"{name} must be from 0 to 1, not {value}")
    if draft.date is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", draft.date):
        problems.append(f"date must be YYYY-MM-DD, not {draft.date!r}")
    if problems:
        raise FragmentRefused("; ".join(problems))


def fact_problems(facts: list[str]) -> list[str]:
    """The facts that are empty or more than one line."""
    problems = []
    for fact in facts:
        if not fact.strip():
            problems.append("a fact is empty")
        elif "\n" in fact.strip():
            problems.append(f"a fact is one line (split it into several): {fact[:40]!r}")
    return problems


def link_problems(texts: list[str]) -> list[str]:
    """Fragments are plain text: the [[wikilinks]] in ``texts``, named once."""
    links = WIKILINK.findall(" ".join(texts))
    if links:
        return [f"fragments are plain text, without [[wikilinks]]: {', '.join(links)}"]
    return []


def tag_problems(tags: list[str]) -> list[str]:
    """The tags nothing like an Obsidian tag is left of once normalised (``tag_name``)."""
    problems = []
    for tag in tags:
        try:
            tag_name(tag)
        except ValueError as exc:
            problems.append(str(exc))
    return problems


def normal_tags(tags: list[str]) -> list[str]:
    """``tags`` as Obsidian takes them, each once, in order (``tag_problems`` first)."""
    return list(dict.fromkeys(tag_name(tag) for tag in tags))


MAX_PROPERTIES = 100
"""Properties a fragment may be given beside its own fields: a fragment is a small note,
and each property is checked and written, so a thousand of them only costs time."""


def property_problems(properties: dict[Any, Any]) -> list[str]:
    """What is wrong with a draft's other properties: more than ``MAX_PROPERTIES``, names
    that are not plain property names, or that would shadow or restate a fragment's own
    fields (Obsidian takes property names without regard to case, so neither may
    ``Importance``), and values that cannot be written as YAML."""
    if len(properties) > MAX_PROPERTIES:
        return [
            f"properties: {len(properties)} given, at most {MAX_PROPERTIES} a fragment "
            "(the limit on properties per fragment)"
        ]
    problems = []
    for name, value in properties.items():
        problem = frontmatter.key_problem(name)
        if problem is not None:
            problems.append(problem)
            continue
        folded = name.casefold()
        if folded in FORBIDDEN_FIELDS:
            problems.append(f"`{name}` is not used in fragments")
        elif folded in MANAGED:
            problems.append(f"`{name}` is set by its own field, not through properties")
        else:
            try:
                frontmatter.render_property(name, value)
            except frontmatter.FrontmatterError as exc:
                problems.append(f"property `{name}`: {exc}")
    return problems


def remember(
    folder: Path,
    draft: Draft,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    similar: Similarity | None = None,
    before_merge: Callable[[Path], None] | None = None,
    after_write: Callable[[Path], None] | None = None,
) -> Remembered:
    """Write ``draft`` into ``folder``: merged into the most similar fragment of its project
    when that one is more than ``threshold`` alike, else as a new file. ``similar`` scores
    the draft's text against each fragment's (semantic, when vectors exist); lexical cosine
    otherwise. ``before_merge`` is shown the file a merge is about to change and
    ``after_write`` the file as written, both under the folder's lock."""
    check_draft(draft)
    date = draft.date or dt.date.today().isoformat()
    text = comparable(draft.summary, draft.facts)
    with memory_lock(folder):
        fragments = _project_fragments(folder, draft.project)
        semantic = None
        if similar is not None and fragments:
            semantic = similar(text, fragments)
        scores = []
        for index, fragment in enumerate(fragments):
            facts = facts_from(fragment.body)
            alike = likeness(draft.summary, draft.facts, fragment.summary, facts)
            if semantic is not None and not conflict(
                draft.summary, draft.facts, fragment.summary, facts
            ):
                alike = max(alike, semantic[index])
            scores.append(alike)
        best, score = None, None
        for fragment, alike in zip(fragments, scores, strict=True):
            if score is None or alike > score:
                best, score = fragment, alike
        if best is not None and score is not None and score > threshold:
            if before_merge is not None:
                before_merge(best.path)  # the file as it is, before this merge changes it
            _merge_into(best, draft, date)
            if after_write is not None:
                after_write(best.path)
            return Remembered("merged", best.path, score)
        path = free_path(
            folder, fragment_name(draft.project, date, draft.description or draft.summary)
        )
        write_atomic(path, _new_fragment(draft, date))
        try:
            verify_facts(path, draft.facts)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        if after_write is not None:
            after_write(path)
        return Remembered("created", path, score)


def _project_fragments(folder: Path, project: str) -> list[Fragment]:
    found = []
    for path in live_fragment_files(folder):  # archived fragments are not merged into
        try:
            fragment = Fragment.read(path)
        except (OSError, UnicodeDecodeError, frontmatter.FrontmatterError):
            continue  # `memvault fragments check` reports files that cannot be read
        # A superseded fragment is history: what is saved now is not merged into it.
        if fragment.project.strip() == project.strip() and not fragment.properties.get(
            SUPERSEDED_BY
        ):
            found.append(fragment)
    return found


def _new_fragment(draft: Draft, date: str) -> str:
    properties: dict[str, Any] = {
        "tags": [TAG, *[t for t in normal_tags(draft.tags) if t != TAG]],
        "project": draft.project,
        "date": dt.date.fromisoformat(date),
        "summary": " ".join(draft.summary.split()),
        "importance": draft.importance,
    }
    if draft.confidence is not None:
        properties["confidence"] = draft.confidence
    if draft.source:
        properties["source"] = draft.source
    properties.update(draft.properties)
    lines = [frontmatter.FENCE, *(frontmatter.render_property(k, v) for k, v in properties.items())]
    lines += [frontmatter.FENCE, *(f"- {fact}" for fact in draft.facts)]
    return "\n".join(lines) + "\n"


def _merge_into(fragment: Fragment, draft: Draft, date: str) -> None:
    """Union of facts and tags, the newer summary, higher importance and confidence,
    today's date, sources kept; the person's other properties and formatting stay as they
    are."""
    text = read_text(fragment.path) or ""
    props = fragment.properties
    existing = facts_from(fragment.body)
    known = {fact_key(fact) for fact in existing}
    added = [fact for fact in draft.facts if fact_key(fact) not in known]
    changes: dict[str, Any] = {"date": dt.date.fromisoformat(date)}
    summary = " ".join(draft.summary.split())
    if summary != str(props.get("summary") or ""):
        changes["summary"] = summary  # a merge is an update: the newer summary says it now
    tags = tag_list(props.get("tags"))
    new_tags = [t for t in [TAG, *normal_tags(draft.tags)] if t not in tags]
    if new_tags or not isinstance(props.get("tags"), list):
        changes["tags"] = [*tags, *new_tags]
    for name in ("importance", "confidence"):
        mine, theirs = getattr(draft, name), props.get(name)
        if name == "confidence" and theirs is None:
            continue  # a fragment with no confidence is held as sure as can be (a person's)
        if mine is not None and (not isinstance(theirs, int | float) or mine > theirs):
            changes[name] = mine
    # Provenance: `source` stays as written; `sources` lists every source merged in.
    sources = _sources(props)
    if draft.source and draft.source not in sources:
        changes["sources"] = [*sources, draft.source]
    changes.update({k: v for k, v in draft.properties.items() if k not in props})
    # Provenance: the events a fragment was learned from accumulate over merges.
    events = draft.properties.get("events")
    if isinstance(events, list) and isinstance(props.get("events"), list):
        union = list(dict.fromkeys([*map(str, props["events"]), *map(str, events)]))
        if union != props["events"]:
            changes["events"] = union
    updated = frontmatter.with_properties(text, changes)
    _, body = frontmatter.split(updated)
    newline = "\r\n" if "\r\n" in text else "\n"
    body = body.rstrip("\r\n")
    if added:
        body = (body + newline if body else "") + newline.join(f"- {fact}" for fact in added)
    write_atomic(fragment.path, frontmatter.replace_body(updated, body + newline))
    try:
        verify_facts(fragment.path, [*existing, *added])
    except BaseException:
        write_atomic(fragment.path, text)
        raise


def tag_list(value: Any) -> list[str]:
    """A fragment's ``tags`` property as a list, whether written as a list or as text."""
    if isinstance(value, list):
        return [str(tag) for tag in value]
    return [tag.strip() for tag in str(value or "").split(",") if tag.strip()]


def _sources(props: dict[str, Any]) -> list[str]:
    listed = props.get("sources")
    found = [str(v) for v in listed] if isinstance(listed, list) else []
    single = props.get("source")
    if single and str(single) not in found:
        found.insert(0, str(single))
    return found


def verify_facts(path: Path, facts: list[str]) -> None:
    """``OSError`` unless the fragment at ``path`` reads back with every one of ``facts``."""
    written = Fragment.read(path)
    present = {fact_key(fact) for fact in facts_from(written.body)}
    missing = [fact for fact in facts if fact_key(fact) not in present]
    if missing:
        raise OSError(f"could not verify {path.name}: missing {missing[:3]}")
