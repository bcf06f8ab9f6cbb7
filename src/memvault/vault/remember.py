"""Writing fragments: create a new one, or merge into the same project's near-duplicate.

Before a fragment is written, the project's fragments are compared with it (``likeness``:
the words of the summaries and of the whole fragments, as the search analyzer reads them,
as sets, so case, spacing, punctuation and the order of a list do not count; a semantic
score when vectors exist). Above the threshold (0.8 by default) the new facts are merged
into the existing file (union of facts and tags, the higher importance and confidence,
today's date, every source kept) instead of creating a near-copy. Two fragments that state
different things are never merged however alike they read: other numbers or versions, a
negation one of them lacks, or the same sentence with another choice in it. All of it
happens under the fragments folder's lock, so concurrent writers never lose an update, and
every write is atomic and verified.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.search.analyzer import tokens
from memvault.vault import frontmatter
from memvault.vault.files import memory_lock, read_text, write_atomic
from memvault.vault.fragments import (
    FORBIDDEN_FIELDS,
    TAG,
    Fragment,
    fragment_name,
    free_path,
    live_fragment_files,
    tag_name,
)

DEFAULT_THRESHOLD = 0.8
MANAGED = frozenset(
    {"tags", "project", "date", "summary", "importance", "confidence", "source", "sources"}
)
_WIKILINK = re.compile(r"\[\[[^\]\n]+\]\]")
_FACT = re.compile(r"^\s*[-*] ")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|without|cannot|can't|don't|doesn't|didn't|isn't|aren't|"
    r"wasn't|won't|shouldn't|mustn't|avoid)\b|[不沒没別别勿無无未非]",
    re.IGNORECASE,
)
# Facts about where a fragment was learned (the pipeline's task and files), not what it says.
_CONTEXT_FACTS = frozenset({"task", "files"})
CONFLICT_FACTOR = 0.5  # what is left of the likeness of two fragments that disagree
SUMMARY_WEIGHT = 0.7  # the summary says what a fragment is; its facts say the rest


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
            "path": str(self.path.relative_to(root)),
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
    facts = []
    for line in body.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        facts.append(_FACT.sub("", stripped) if _FACT.match(stripped) else stripped)
    return facts


def check_draft(draft: Draft) -> None:
    problems = []
    if not draft.project.strip():
        problems.append("project is required")
    if not draft.summary.strip():
        problems.append("summary is required (one sentence)")
    if not draft.facts:
        problems.append("at least one fact is required")
    for fact in draft.facts:
        if not fact.strip():
            problems.append("a fact is empty")
        elif "\n" in fact.strip():
            problems.append(f"a fact is one line (split it into several): {fact[:40]!r}")
    problems += tag_problems(draft.tags)
    problems += property_problems(draft.properties)
    links = _WIKILINK.findall(" ".join([draft.summary, *draft.facts]))
    if links:
        problems.append(f"fragments are plain text, without [[wikilinks]]: {', '.join(links)}")
    for name, value in (("importance", draft.importance), ("confidence", draft.confidence)):
        if value is not None and not 0 <= value <= 1:
            problems.append(f"{name} must be from 0 to 1, not {value}")
    if draft.date is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", draft.date):
        problems.append(f"date must be YYYY-MM-DD, not {draft.date!r}")
    if problems:
        raise FragmentRefused("; ".join(problems))


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


def property_problems(properties: dict[Any, Any]) -> list[str]:
    """What is wrong with a draft's other properties: names that are not plain property
    names, or that would shadow or restate a fragment's own fields (Obsidian takes
    property names without regard to case, so neither may ``Importance``), and values
    that cannot be written as YAML."""
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
    text = _comparable(draft.summary, draft.facts)
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
            _verify(path, draft.facts)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        if after_write is not None:
            after_write(path)
        return Remembered("created", path, score)


def likeness(summary: str, facts: list[str], other_summary: str, other_facts: list[str]) -> float:
    """How alike two fragments read, from 0 to 1: the cosine of their summaries' word sets,
    weighted with that of their whole texts, so the same summary with a fact more or less
    stays above 0.8. Words are the search analyzer's (stems, Chinese character pairs), taken
    once each: case, spacing, punctuation and the order of a list make no difference. Two
    fragments in ``conflict`` keep only a fraction of it."""
    summary_score = _cosine(_words(summary), _words(other_summary))
    whole_score = _cosine(
        _words(_comparable(summary, facts)), _words(_comparable(other_summary, other_facts))
    )
    score = SUMMARY_WEIGHT * summary_score + (1 - SUMMARY_WEIGHT) * whole_score
    if conflict(summary, facts, other_summary, other_facts):
        score *= CONFLICT_FACTOR
    return score


def conflict(
    summary: str, facts: list[str], other_summary: str, other_facts: list[str]
) -> str | None:
    """Why two fragments state different things however alike their words are, or None:
    their summaries hold other numbers (a version, a price, a size), one negates what the
    other says, a fact with the same name holds other numbers, or the summaries are one
    sentence with one choice swapped for another (``Store sessions in Redis`` /
    ``… in Postgres``: more words shared than changed on either side)."""
    if _numbers(summary) != _numbers(other_summary):
        return "numbers"
    if (
        len(_NEGATION.findall(_normal(summary))) % 2
        != len(_NEGATION.findall(_normal(other_summary))) % 2
    ):
        return "negation"
    mine, theirs = _fact_numbers(facts), _fact_numbers(other_facts)
    if any(mine[name] != theirs[name] for name in mine.keys() & theirs.keys()):
        return "fact numbers"
    left, right = _words(summary), _words(other_summary)
    only_left, only_right = left - right, right - left
    if only_left and only_right and len(left & right) >= max(len(only_left), len(only_right)):
        return "another choice"
    return None


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _words(text: str) -> set[str]:
    return set(tokens(_normal(text)))


def _cosine(left: set[str], right: set[str]) -> float:
    if not left or not right:
        return 1.0 if left == right else 0.0
    return len(left & right) / math.sqrt(len(left) * len(right))


def _numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(_normal(text)))


def _fact_numbers(facts: list[str]) -> dict[str, set[str]]:
    """The numbers of each ``name: value`` fact that has some, by name (the task and the
    files a fragment was learned in are not what it says)."""
    found: dict[str, set[str]] = {}
    for fact in facts:
        name, colon, value = _normal(fact).partition(":")
        numbers = _numbers(value) if colon else set()
        if numbers and name.strip() not in _CONTEXT_FACTS:
            found.setdefault(name.strip(), set()).update(numbers)
    return found


def _project_fragments(folder: Path, project: str) -> list[Fragment]:
    found = []
    for path in live_fragment_files(folder):  # archived fragments are not merged into
        try:
            fragment = Fragment.read(path)
        except (OSError, UnicodeDecodeError, frontmatter.FrontmatterError):
            continue  # `memvault fragments check` reports files that cannot be read
        if fragment.project.strip() == project.strip():
            found.append(fragment)
    return found


def _comparable(summary: str, facts: list[str]) -> str:
    return "\n".join([summary, *facts])


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
    known = {_key(fact) for fact in existing}
    added = [fact for fact in draft.facts if _key(fact) not in known]
    changes: dict[str, Any] = {"date": dt.date.fromisoformat(date)}
    summary = " ".join(draft.summary.split())
    if summary != str(props.get("summary") or ""):
        changes["summary"] = summary  # a merge is an update: the newer summary says it now
    tags = _tag_list(props.get("tags"))
    new_tags = [t for t in [TAG, *normal_tags(draft.tags)] if t not in tags]
    if new_tags or not isinstance(props.get("tags"), list):
        changes["tags"] = [*tags, *new_tags]
    for name in ("importance", "confidence"):
        mine, theirs = getattr(draft, name), props.get(name)
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
        _verify(fragment.path, [*existing, *added])
    except BaseException:
        write_atomic(fragment.path, text)
        raise


def _tag_list(value: Any) -> list[str]:
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


def _verify(path: Path, facts: list[str]) -> None:
    written = Fragment.read(path)
    present = {_key(fact) for fact in facts_from(written.body)}
    missing = [fact for fact in facts if _key(fact) not in present]
    if missing:
        raise OSError(f"could not verify {path.name}: missing {missing[:3]}")


def _key(fact: str) -> str:
    return " ".join(fact.lower().split())


# -- editing a fragment ---------------------------------------------------------------------


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
    for fact in [*(edit.facts or []), *edit.add_facts, *edit.remove_facts]:
        if not fact.strip():
            problems.append("a fact is empty")
        elif "\n" in fact.strip():
            problems.append(f"a fact is one line (split it into several): {fact[:40]!r}")
    links = _WIKILINK.findall(" ".join([edit.summary or "", *(edit.facts or []), *edit.add_facts]))
    if links:
        problems.append(f"fragments are plain text, without [[wikilinks]]: {', '.join(links)}")
    if edit.importance is not None and not 0 <= edit.importance <= 1:
        problems.append(f"importance must be from 0 to 1, not {edit.importance}")
    problems += tag_problems([*(edit.tags or []), *edit.add_tags, *edit.remove_tags])
    if problems:
        raise FragmentRefused("; ".join(problems))


def edit_fragment(folder: Path, path: Path, edit: Edit) -> None:
    """Change the fields ``edit`` names in the fragment at ``path`` (inside ``folder``),
    under the folder's lock: the file is read afresh there, so whatever a person changed
    in it since stays, and only the properties and fact lines asked for are rewritten.
    The write is atomic and verified (the file as it was comes back if it does not read
    back as meant). ``FragmentRefused`` when the edit breaks a rule or would leave the
    fragment without facts; ``FileNotFoundError`` when the file is not there."""
    check_edit(edit)
    with memory_lock(folder):
        text = read_text(path)
        if text is None:
            raise FileNotFoundError(path)
        try:
            fragment = Fragment.read(path)
        except (UnicodeDecodeError, frontmatter.FrontmatterError) as exc:
            raise FragmentRefused(f"{path.name} cannot be read ({exc}): fix it by hand") from None
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
            _verify(path, facts)
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
        current = _tag_list(props.get("tags"))
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
        lines = [line for line in lines if not _is_fact_line(line)]
        wanted = list(dict.fromkeys(edit.facts))
    else:
        removing = {_line_key(fact) for fact in edit.remove_facts}
        present = {_key(fact) for fact in existing}
        missing = [fact for fact in edit.remove_facts if _line_key(fact) not in present]
        if missing:
            raise FragmentRefused(f"no such fact to remove: {', '.join(map(repr, missing))}")
        lines = [
            line for line in lines if not (_is_fact_line(line) and _line_key(line) in removing)
        ]
        wanted = []
    known = {_line_key(line) for line in lines if _is_fact_line(line)}
    added = []
    for fact in [*wanted, *edit.add_facts]:
        if _line_key(fact) not in known:
            known.add(_line_key(fact))
            added.append(_fact_text(fact))
    kept = "\n".join(lines).rstrip("\r\n")
    new_body = (kept + newline if kept else "") + newline.join(f"- {fact}" for fact in added)
    facts = facts_from(new_body)
    if not facts:
        raise FragmentRefused("the edit would leave the fragment without facts")
    return new_body + newline, facts


def _is_fact_line(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _fact_text(line: str) -> str:
    """A fact line without its list marker (``- x`` is the fact ``x``)."""
    stripped = line.strip()
    return _FACT.sub("", stripped) if _FACT.match(stripped) else stripped


def _line_key(line: str) -> str:
    return _key(_fact_text(line))


def _verify_properties(path: Path, changes: dict[str, Any]) -> None:
    written = Fragment.read(path).properties
    wrong = [
        name
        for name, value in changes.items()
        if written.get(name) != (value.isoformat() if isinstance(value, dt.date) else value)
    ]
    if wrong:
        raise OSError(f"could not verify {path.name}: {', '.join(wrong)} did not read back")
