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
- ``modifies``: decision → files changed in the turn it was made;
- ``uses``: decision → library it names;
- ``related_to``: entities of one observation with nothing more specific between them.

A fix is seen only when the failure and the passing run are in the same batch of events.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from memvault.domain import Event, Observation, iso, observation_id, utc_now
from memvault.graph import code, failures
from memvault.graph.model import GraphDelta, Ref
from memvault.pipeline import cues
from memvault.pipeline.activity import FAILURE, PROMPT, RESPONSE, TOOL, Step, command_key, steps
from memvault.pipeline.text import clip
from memvault.vault.fragments import TAG, Fragment
from memvault.vault.remember import Draft, facts_from

DECISION_LIMIT = 200
LINKS_PER_STEP = 12
MAX_PER_STEP = 10  # entities of one kind taken from one observation
TURN_FILES = 5  # files a decision is said to modify, at most

_WRITTEN_KEYS = ("new_string", "content", "contents", "code_edit", "new_str", "file_text")
_PATCH_KEYS = ("patch", "diff", "input")
_FRAGMENT_KINDS = frozenset({TAG, "decision", "lesson", "pitfall", "finding", "data"})
_FILES_FACT = re.compile(r"^files?:\s*(.+)$", re.IGNORECASE)
_ERROR_FACT = re.compile(r"^error:\s*(.+)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Source:
    """One memory (an observation, a fragment) being read: what it mentions and relates is
    recorded with its id and time."""

    delta: GraphDelta
    origin: str
    at: str

    def add(self, kind: str, names: Sequence[str], key: str | None = None) -> list[Ref]:
        refs = (
            self.delta.add(kind, n, source=self.origin, at=self.at, key=key)
            for n in names[:MAX_PER_STEP]
        )
        return [r for r in refs if r is not None]

    def relate(self, source: Ref, target: Ref, relation: str) -> None:
        self.delta.relate(source, target, relation, origin=self.origin, at=self.at)


@dataclass(slots=True)
class _Found:
    """What one step contributed, for the relations that span steps."""

    step: Step
    changed: list[Ref] = field(default_factory=list)
    errors: list[Ref] = field(default_factory=list)
    decisions: list[Ref] = field(default_factory=list)


def extract_graph(events: Sequence[Event], observations: Sequence[Observation]) -> GraphDelta:
    """The entities and relations a batch of a session's events shows."""
    delta = GraphDelta()
    cwds = {e.seq: e.cwd for e in events}
    inputs = {e.seq: _tool_input(e.payload) for e in events}
    concepts = {o.event_seq: o.concepts for o in observations}
    found = [
        _read_step(delta, s, cwds.get(s.seq, ""), inputs.get(s.seq, {}), concepts.get(s.seq, []))
        for s in steps(events, observations)
        if not s.rejected
    ]
    _decisions_modify_their_turn(delta, found)
    _changes_fix_failures(delta, found)
    _decisions_use_libraries(delta, found)
    return delta


def _read_step(
    delta: GraphDelta, step: Step, cwd: str, tool_input: dict, concepts: list[str]
) -> _Found:
    source = _Source(delta, observation_id(step.seq), step.occurred_at)
    found = _Found(step)
    paths = [] if step.type == "search" else [file_name(p, cwd) for p in step.files]
    files = source.add("file", [p for p in paths if p and not p.endswith("/")])
    refs = [*files, *source.add("concept", concepts)]
    if step.changes_files:
        found.changed = files
        if len(files) == 1:
            refs += _read_code(source, files[0], _written(tool_input))
    if step.role == TOOL and step.command:
        refs += source.add("library", code.installed(step.command))
    if step.role == FAILURE:
        found.errors = _read_failure(source, step, cwd, files)
        refs += found.errors + source.add("library", failures.missing_libraries(step.text))
    if step.role in (PROMPT, RESPONSE) and (step.role == RESPONSE or cues.is_task(step.text)):
        found.decisions = source.add("decision", _decisions(step))
        refs += found.decisions + source.add("function", code.calls(cues.clean(step.text)))
    _link(source, refs)
    return found


def _read_code(source: _Source, file: Ref, written: str) -> list[Ref]:
    """Symbols and libraries in the code an edit wrote to one file."""
    if not written:
        return []
    path = source.delta.entities[file].name
    symbols = source.add("function", code.definitions(path, written))
    imported = source.add("library", code.imports(path, written))
    declared = source.add("library", code.dependencies(path, written))
    for library in imported:
        source.relate(file, library, "imports")
    for library in declared:
        source.relate(file, library, "depends_on")
    return [*symbols, *imported, *declared]


def _read_failure(source: _Source, step: Step, cwd: str, files: list[Ref]) -> list[Ref]:
    """The errors a failure reports, each caused by the files it points at: its own, the
    session's files it names, and the innermost stack frame inside the project."""
    errors = _errors(source, step.text)
    if not errors:
        return []
    named = [e.ref for e in source.delta.of_kind("file") if _names(step.text, e.name)]
    frames = [p for p in (file_name(f, cwd) for f in failures.frames(step.text)) if _in_project(p)]
    for file in dict.fromkeys([*files, *named, *source.add("file", frames[:1])]):
        for error in errors:
            source.relate(file, error, "causes")
    return errors


def _errors(source: _Source, text: str) -> list[Ref]:
    return [r for s in failures.signatures(text) for r in source.add("error", [s.name], key=s.key)]


def _decisions(step: Step) -> list[str]:
    """Decisions stated in a prompt or reply, read with the fragment extractor's cues."""
    found = []
    for sentence in cues.sentences(step.text):
        if cues.is_question(sentence) or (step.role == RESPONSE and cues.is_narration(sentence)):
            continue
        if cues.is_decision(sentence):
            found.append(clip(cues.statement(sentence), DECISION_LIMIT))
    return found


def _link(source: _Source, refs: list[Ref]) -> None:
    """Entities of one memory are related: each to the files it was seen with (or,
    without a file, to the next one), errors to everything, files in a chain; pairs with
    a more specific relation are left alone. Bounded per memory."""
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
        if not source.delta.related(a, b, ignoring="related_to"):
            source.relate(a, b, "related_to")
            budget -= 1


def _decisions_modify_their_turn(delta: GraphDelta, found: list[_Found]) -> None:
    """A decision modifies the files changed in the turn it was made in (from one task
    prompt to the next)."""
    for turn in _turns(found):
        changed = list(dict.fromkeys(f for item in turn for f in item.changed))[:TURN_FILES]
        for item in turn:
            for decision in item.decisions:
                for file in changed:
                    _source(delta, item).relate(decision, file, "modifies")


def _turns(found: list[_Found]) -> list[list[_Found]]:
    turns: list[list[_Found]] = [[]]
    for item in found:
        if item.step.role == PROMPT and cues.is_task(item.step.text) and turns[-1]:
            turns.append([])
        turns[-1].append(item)
    return turns


def _changes_fix_failures(delta: GraphDelta, found: list[_Found]) -> None:
    """A command failed, something changed, the same command passed: what changed (files,
    decisions) fixes what it failed with."""
    for index, failure in enumerate(found):
        if not (failure.errors and failure.step.command):
            continue
        key = command_key(failure.step.command)
        later = found[index + 1 :]
        passed = next(
            (i for i, item in enumerate(later) if item.step.role == TOOL and _runs(item, key)),
            None,
        )
        if passed is None:
            continue
        verified = _source(delta, later[passed])
        for item in later[:passed]:
            for fix in [*item.changed, *item.decisions]:
                for error in failure.errors:
                    verified.relate(fix, error, "fixes")


def _runs(item: _Found, key: str) -> bool:
    return bool(item.step.command) and command_key(item.step.command) == key


def _decisions_use_libraries(delta: GraphDelta, found: list[_Found]) -> None:
    """A decision uses the libraries it names ("we'll use httpx instead of requests")."""
    libraries = delta.of_kind("library")
    for item in found:
        for decision in item.decisions:
            statement = delta.entities[decision].name
            for library in libraries:
                if _names(statement, library.name):
                    _source(delta, item).relate(decision, library.ref, "uses")


def _source(delta: GraphDelta, item: _Found) -> _Source:
    return _Source(delta, observation_id(item.step.seq), item.step.occurred_at)


def _names(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` as a whole word (case aside)."""
    if len(name) < 2:
        return False
    return re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/-])", text, re.IGNORECASE) is not None


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
    source = _Source(GraphDelta(), fragment_id, at)
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
    return source.delta


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
