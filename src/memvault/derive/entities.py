"""Entities and relations from a session's events, and from a fragment.

Offline and deterministic: every entity comes from something the session states plainly.

- **file**: the files an observation names (read, written, failed on), relative to the
  session's folder.
- **function**: what an edit defines (``def``, ``class``, ``function``, ``fn``…) and the
  ``calls()`` a prompt or reply names.
- **library**: imports in written code, dependencies in a manifest edit, packages a
  command installs, modules a failure says are missing.
- **error**: the signature of a failure (see ``failures``).
- **concept**: an observation's concepts; a fragment's tags.
- **decision**: a sentence the fragment extractor's cues read as a decision.

Relations, each backed by the observations (or fragment) that showed it:

- ``imports``: file → library its new code imports;
- ``depends_on``: manifest file → library it declares;
- ``causes``: file → error a failure points at (a stack frame, a file it names);
- ``fixes``: file changed, or decision made, between a failed command and its next
  successful run → the error it failed with;
- ``modifies``: decision → files changed in the turn it was made (the nearest before it
  and after it);
- ``uses``: decision → library it names;
- ``related_to``: entities of one observation with nothing more specific between them.

A relation between steps reaches at most ``CONTEXT_EVENTS`` events back. A run is given
that many of the session's events before its watermark as context: read again, never
counted again (what a new event shows is all a run returns), so a session's graph is the
same whether it was read a few events at a time or all at once.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from memvault.derive import code, cues, failures
from memvault.derive.activity import FAILURE, PROMPT, RESPONSE, TOOL, Step, command_key, steps
from memvault.derive.names import Names
from memvault.derive.text import clip
from memvault.domain import Event, Observation, iso, observation_id, utc_now
from memvault.graph.model import GraphDelta, Ref
from memvault.vault.fragments import TAG, Fragment
from memvault.vault.remember import Draft, facts_from

CONTEXT_EVENTS = 200  # how far back, in a session's events, a relation between steps reaches
DECISION_LIMIT = 200
FAILURE_TEXT = 4_000  # characters of a failure's output read: its beginning and its end
LINKS_PER_STEP = 12
MAX_PER_STEP = 10  # entities of one kind taken from one observation
NAMED_FILES = 500  # recent files a failure's output is checked for
TURN_FILES = 5  # files a decision is said to modify, at most, on each side of it

_WRITTEN_KEYS = ("new_string", "content", "contents", "code_edit", "new_str", "file_text")
_PATCH_KEYS = ("patch", "diff", "input")
_FRAGMENT_KINDS = frozenset({TAG, "decision", "lesson", "pitfall", "finding", "data"})
_FILES_FACT = re.compile(r"^files?:\s*(.+)$", re.IGNORECASE)
_ERROR_FACT = re.compile(r"^error:\s*(.+)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Source:
    """One memory (an observation, a fragment) being read: what it mentions and relates is
    recorded with its id and time in ``seen``, and in ``out`` when the memory is ``fresh``
    (not read by an earlier run)."""

    seen: GraphDelta
    out: GraphDelta
    origin: str
    at: str
    fresh: bool = True

    def add(self, kind: str, names: Sequence[str], key: str | None = None) -> list[Ref]:
        refs = []
        for name in names[:MAX_PER_STEP]:
            ref = self.seen.add(kind, name, source=self.origin, at=self.at, key=key)
            if ref is None:
                continue
            refs.append(ref)
            if self.fresh and self.out is not self.seen:
                self.out.add(kind, name, source=self.origin, at=self.at, key=key)
        return refs

    def relate(self, source: Ref, target: Ref, relation: str, *, fresh: bool | None = None) -> None:
        """Record the relation; it is returned when ``fresh`` (by default: when this memory
        is), with its two ends."""
        self.seen.relate(source, target, relation, origin=self.origin, at=self.at)
        if self.out is self.seen or not (self.fresh if fresh is None else fresh):
            return
        for end in (source, target):
            if end in self.seen.entities and end not in self.out.entities:
                self.out.include(self.seen.entities[end])
        self.out.relate(source, target, relation, origin=self.origin, at=self.at)


@dataclass(slots=True)
class _Found:
    """What one step contributed, for the relations that span steps."""

    step: Step
    at: int  # the step's place among the session's events
    source: _Source
    command: str = ""  # the command's key
    files: list[Ref] = field(default_factory=list)
    changed: list[Ref] = field(default_factory=list)
    errors: list[Ref] = field(default_factory=list)
    decisions: list[Ref] = field(default_factory=list)
    libraries: list[Ref] = field(default_factory=list)
    starts_turn: bool = False  # a task prompt: the turn it asks for begins here

    @property
    def fresh(self) -> bool:
        return self.source.fresh


def extract_graph(
    events: Sequence[Event], observations: Sequence[Observation], *, after: int = 0
) -> GraphDelta:
    """The entities and relations a batch of a session's events shows.

    Events up to seq ``after`` are context, read by an earlier run: they are read again
    for the relations that reach back into them, and only what the events past ``after``
    show is returned (their mentions; relations whose latest evidence is one of them)."""
    seen = GraphDelta()
    out = seen if after <= 0 else GraphDelta()
    places = {seq: n for n, (_, seq) in enumerate(sorted((e.occurred_at, e.seq) for e in events))}
    cwds = {e.seq: e.cwd for e in events}
    inputs = {e.seq: _tool_input(e.payload) for e in events}
    concepts = {o.event_seq: o.concepts for o in observations}
    found: list[_Found] = []
    for step in steps(events, observations):
        if step.rejected:
            continue
        source = _Source(seen, out, observation_id(step.seq), step.occurred_at, step.seq > after)
        item = _Found(step, places.get(step.seq, len(places)), source)
        _read_step(item, found, cwds.get(step.seq, ""), inputs.get(step.seq, {}), concepts)
        found.append(item)
    _decisions_modify_their_turn(found)
    _changes_fix_failures(found)
    _decisions_use_libraries(found)
    return out


def _read_step(
    item: _Found, before: list[_Found], cwd: str, tool_input: dict, concepts: dict
) -> None:
    step, source = item.step, item.source
    task = step.role == PROMPT and cues.is_task(step.text)
    item.starts_turn = task
    item.command = command_key(step.command) if step.command else ""
    paths = [] if step.type == "search" else [file_name(p, cwd) for p in step.files]
    item.files = source.add("file", [p for p in paths if p and not p.endswith("/")])
    refs = [*item.files, *source.add("concept", concepts.get(step.seq, []))]
    if step.changes_files:
        item.changed = item.files
        if len(item.files) == 1:
            refs += _read_code(item, _written(tool_input))
    if step.role == TOOL and step.command:
        installed = source.add("library", code.installed(step.command))
        item.libraries += installed
        refs += installed
    if step.role == FAILURE:
        text = clip_failure(step.text)
        item.errors = _read_failure(item, before, text, cwd)
        missing = source.add("library", failures.missing_libraries(text))
        item.libraries += missing
        refs += item.errors + missing
    if step.role == RESPONSE or task:
        item.decisions = source.add("decision", _decisions(step))
        refs += item.decisions + source.add("function", code.calls(cues.clean(step.text)))
    _link(source, refs)


def _read_code(item: _Found, written: str) -> list[Ref]:
    """Symbols and libraries in the code an edit wrote to one file."""
    if not written:
        return []
    source, file = item.source, item.files[0]
    path = source.seen.entities[file].name
    symbols = source.add("function", code.definitions(path, written))
    imported = source.add("library", code.imports(path, written))
    declared = source.add("library", code.dependencies(path, written))
    for library in imported:
        source.relate(file, library, "imports")
    for library in declared:
        source.relate(file, library, "depends_on")
    item.libraries += [*imported, *declared]
    return [*symbols, *imported, *declared]


def _read_failure(item: _Found, before: list[_Found], text: str, cwd: str) -> list[Ref]:
    """The errors a failure reports, each caused by the files it points at: its own, the
    session's recent files it names, and the innermost stack frame inside the project."""
    source = item.source
    errors = _errors(source, text)
    if not errors:
        return []
    recent = _recent_files(item, before)
    words = Names(text) if recent else None
    named = [f for f in recent if words and words.names(source.seen.entities[f].name)]
    frames = [p for p in (file_name(f, cwd) for f in failures.frames(text)) if _in_project(p)]
    for file in dict.fromkeys([*item.files, *named, *source.add("file", frames[:1])]):
        for error in errors:
            source.relate(file, error, "causes")
    return errors


def _errors(source: _Source, text: str) -> list[Ref]:
    return [r for s in failures.signatures(text) for r in source.add("error", [s.name], key=s.key)]


def _recent_files(item: _Found, before: list[_Found]) -> list[Ref]:
    """The files the steps before ``item`` mentioned, within reach and the most recent
    first, at most ``NAMED_FILES``."""
    recent: dict[Ref, None] = {}
    for earlier in reversed(before):
        if item.at - earlier.at > CONTEXT_EVENTS or len(recent) >= NAMED_FILES:
            break
        recent.update(dict.fromkeys(f for f in earlier.files if f not in recent))
    return list(recent)[:NAMED_FILES]


def _decisions(step: Step) -> list[str]:
    """Decisions stated in a prompt or reply, read with the fragment extractor's cues."""
    found = []
    openers = step.openers
    for sentence in cues.sentences(step.text):
        if cues.is_question(sentence) or (step.role == RESPONSE and cues.is_narration(sentence)):
            continue
        if cues.is_decision(sentence, opening=sentence in openers):
            found.append(clip(cues.statement(sentence), DECISION_LIMIT))
    return found


def _link(source: _Source, refs: list[Ref]) -> None:
    """Entities of one memory are related: each to the files it was seen with (or,
    without a file, to the next one), errors to everything, files in a chain; pairs the
    memory relates more specifically are left alone. Bounded per memory."""
    refs = list(dict.fromkeys(refs))
    files = [r for r in refs if r[0] == "file"]
    others = [r for r in refs if r[0] != "file"]
    pairs = [(f, o) for f in files for o in others] if files else list(pairwise(others))
    pairs += [(e, o) for e in others if e[0] == "error" for o in others if o[0] != "error"]
    pairs += list(pairwise(files))
    budget = LINKS_PER_STEP
    for a, b in pairs:
        if budget == 0:
            return
        if not source.seen.related(a, b, origin=source.origin, ignoring="related_to"):
            source.relate(a, b, "related_to")
            budget -= 1


def _decisions_modify_their_turn(found: list[_Found]) -> None:
    """A decision modifies the files changed in the turn it was made in (from one task
    prompt to the next): the nearest ``TURN_FILES`` changed before it and after it, within
    ``CONTEXT_EVENTS`` events."""
    for index, item in enumerate(found):
        if not item.decisions:
            continue
        earlier = [] if item.starts_turn else _turn_changes(item, reversed(found[:index]))
        later = _turn_changes(item, found[index + 1 :])
        for file, by in [*earlier, *later]:
            for decision in item.decisions:
                item.source.relate(decision, file, "modifies", fresh=item.fresh or by.fresh)


def _turn_changes(item: _Found, others: Any) -> list[tuple[Ref, _Found]]:
    """The first ``TURN_FILES`` files changed among ``others`` (steps going away from
    ``item``) before the turn ends or reach runs out, each with the step that changed it."""
    changes: dict[Ref, _Found] = {}
    for other in others:
        if abs(other.at - item.at) > CONTEXT_EVENTS:
            break
        if other.starts_turn and other.at > item.at:
            break  # the next turn
        for file in other.changed:
            changes.setdefault(file, other)
            if len(changes) == TURN_FILES:
                return list(changes.items())
        if other.starts_turn:
            break  # this turn's first step
    return list(changes.items())


def _changes_fix_failures(found: list[_Found]) -> None:
    """A command failed, something changed, the same command passed (within
    ``CONTEXT_EVENTS`` events): what changed (files, decisions) fixes what it failed
    with. The passing run is the evidence."""
    for index, failure in enumerate(found):
        if not (failure.errors and failure.command):
            continue
        for offset, later in enumerate(found[index + 1 :], start=index + 1):
            if later.at - failure.at > CONTEXT_EVENTS:
                break
            if later.step.role == TOOL and later.command == failure.command:
                for item in found[index + 1 : offset]:
                    for fix in [*item.changed, *item.decisions]:
                        for error in failure.errors:
                            later.source.relate(fix, error, "fixes")
                break


def _decisions_use_libraries(found: list[_Found]) -> None:
    """A decision uses the libraries it names ("we'll use httpx instead of requests"),
    seen within ``CONTEXT_EVENTS`` events of it."""
    for index, item in enumerate(found):
        if not item.decisions:
            continue
        near: dict[Ref, bool] = {}  # library → whether a fresh step mentions it
        for side in (reversed(found[:index]), found[index + 1 :]):
            for other in side:
                if abs(other.at - item.at) > CONTEXT_EVENTS:
                    break
                for library in other.libraries:
                    near[library] = near.get(library, False) or other.fresh
        for library in item.libraries:
            near[library] = near.get(library, False) or item.fresh
        seen = item.source.seen
        for decision in item.decisions if near else []:
            words = Names(seen.entities[decision].name)
            for library, fresh in near.items():
                if words.names(seen.entities[library].name):
                    item.source.relate(decision, library, "uses", fresh=item.fresh or fresh)


def clip_failure(text: str) -> str:
    """A failure's output as it is read: whole up to ``FAILURE_TEXT`` characters, else its
    beginning and its end (where tracebacks and test summaries put the error), cut at
    line breaks."""
    if len(text) <= FAILURE_TEXT:
        return text
    half = FAILURE_TEXT // 2
    head, tail = text[:half], text[-half:]
    if "\n" in head:
        head = head[: head.rindex("\n")]
    if "\n" in tail:
        tail = tail[tail.index("\n") + 1 :]
    return f"{head}\n{tail}"


def file_name(path: str, cwd: str = "") -> str:
    """A path as the project knows it: forward slashes, relative to the session's folder
    when inside it, without ``./``."""
    path = re.sub(r"/{2,}", "/", path.strip().replace("\\", "/"))
    folder = re.sub(r"/{2,}", "/", cwd.strip().replace("\\", "/")).rstrip("/")
    if folder and path.casefold().startswith(folder.casefold() + "/"):
        path = path[len(folder) + 1 :]
    while path.startswith("./"):
        path = path[2:]
    return path


def _in_project(path: str) -> bool:
    """Whether a stack frame's path (made relative) is the project's own code: not outside
    the session's folder, not an installed package, not a runtime's (``node:internal``)."""
    if not path or path.startswith(("/", "..", "<")) or ":" in path:
        return False
    return not {"site-packages", "dist-packages", "node_modules"} & set(path.split("/"))


def _tool_input(payload: Any) -> dict:
    data = payload if isinstance(payload, dict) else {}
    value = data.get("tool_input", data.get("toolInput"))
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def _written(tool_input: dict) -> str:
    """The code an edit wrote: new text only, so what it removed is not read as present."""
    parts = [v for k in _WRITTEN_KEYS if isinstance(v := tool_input.get(k), str)]
    for edit in tool_input.get("edits") or []:
        if isinstance(edit, dict):
            parts += [v for k in _WRITTEN_KEYS if isinstance(v := edit.get(k), str)]
    for key in _PATCH_KEYS:
        patch = tool_input.get(key)
        if isinstance(patch, str):
            parts += [
                line[1:] for line in patch.splitlines() if line[:1] == "+" and line[:3] != "+++"
            ]
    return "\n".join(parts)


# -- fragments ---------------------------------------------------------------------------


def graph_of_fragment(fragment_id: str, fragment: Fragment | Draft) -> GraphDelta:
    """What a fragment (a file, or a draft about to be written) adds to the graph: its
    files and concepts (tags), the errors its facts quote, and itself as a decision when
    it is one. ``fragment_id``, its public id (what ``memvault get`` takes), is the
    source every entity records."""
    summary, facts, tags, properties, day = _fragment_fields(fragment)
    at = f"{day}T00:00:00.000Z" if re.fullmatch(r"\d{4}-\d{2}-\d{2}", day or "") else iso(utc_now())
    delta = GraphDelta()
    source = _Source(delta, delta, fragment_id, at)
    files = source.add("file", [file_name(p) for p in _fragment_files(facts, properties)])
    concepts = _strings(properties.get("concepts")) + [
        t for t in tags if t.casefold() not in _FRAGMENT_KINDS
    ]
    quoted = [m.group(1) for f in facts if (m := _ERROR_FACT.match(f.strip()))]
    errors = [r for text in quoted for r in _errors(source, text)]
    decisions = (
        source.add("decision", [summary.strip().rstrip(".。")]) if "decision" in tags else []
    )
    for decision in decisions:
        for file in files[:TURN_FILES]:
            source.relate(decision, file, "modifies")
    _link(source, [*files, *errors, *source.add("concept", concepts), *decisions])
    return delta


def _fragment_fields(
    fragment: Fragment | Draft,
) -> tuple[str, list[str], list[str], dict[str, Any], str | None]:
    if isinstance(fragment, Draft):
        return fragment.summary, fragment.facts, fragment.tags, fragment.properties, fragment.date
    properties = fragment.properties
    day = properties.get("date")
    return (
        fragment.summary,
        facts_from(fragment.body),
        _strings(properties.get("tags")),
        properties,
        str(day) if day else None,
    )


def _fragment_files(facts: Sequence[str], properties: dict[str, Any]) -> list[str]:
    """Files a fragment names: a ``files`` property, and ``file:`` / ``files:`` facts."""
    found = _strings(properties.get("files"))
    for fact in facts:
        if match := _FILES_FACT.match(fact.strip()):
            found += [p.strip().strip("`") for p in match.group(1).split(",")]
    return [p for p in dict.fromkeys(found) if p and os.path.basename(p)]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return []
