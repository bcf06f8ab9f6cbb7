"""Session snapshots, ``memory/sessions/<id>.md``: parse, render, merge, verify.

A snapshot written by memvault opens with YAML frontmatter that Obsidian's Properties and
Dataview read (``status``, ``agent``, ``session``, ``started``, ``updated``, ``project`` when
the Metadata table names one, ``tags`` with ``memvault/session``), refreshed from the
Metadata table on every write; the template below it keeps its shape. A person's own keys
in that frontmatter stay as written, and frontmatter memvault cannot read is left alone.

A snapshot is never rewritten from new content alone. ``merge`` keeps every old item that
the new content does not mention, updates the ones it restates, adds the new ones, and
moves items marked ``[superseded]``, ``[resolved]`` or ``[done]`` (or ``[已取代]``,
``[已解決]``, ``[已完成]``…; before the item or after it) under Superseded / Resolved.
``dropped`` proves it: every old item is still there or recorded as such.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memvault.vault import frontmatter

CONTEXT = "Current Context"
DECISIONS = "Decisions"
FILES = "Files / Artifacts"
QUESTIONS = "Open Questions"
NEXT = "Next Actions"
CONTINUES = "Continues From"
SUPERSEDED = "Superseded / Resolved"
SECTIONS = (CONTEXT, DECISIONS, FILES, QUESTIONS, NEXT, CONTINUES, SUPERSEDED)
METADATA_FIELDS = ("Session ID", "Agent Name", "Topic", "Status", "Started At", "Updated At")
NONE = "None"
SESSION_TAG = "memvault/session"
# The frontmatter key holding the row Summary memvault last derived for the session.
BOARD_SUMMARY = "board-summary"
_TIME_FORMAT = "%Y-%m-%d %H:%M"  # the board's local times

# Markers that take an item out of its section, in English and Chinese (both scripts).
MARKERS = (
    "superseded",
    "resolved",
    "done",
    "已取代",
    "已被取代",
    "已替代",
    "已廢棄",
    "已废弃",
    "已解決",
    "已解决",
    "已完成",
)
_MARKER_WORD = r"\[(?:" + "|".join(MARKERS) + r")\]"
# A marker opens an item ("[done] Run the tests") or closes it ("Run the tests [done]").
_MARKER = re.compile(rf"^\s*({_MARKER_WORD})\s*", re.IGNORECASE)
_END_MARKER = re.compile(rf"[\s\-–—:：]*({_MARKER_WORD})\s*$", re.IGNORECASE)
_NONE_ITEM = re.compile(r"^`?none`?\.?$", re.IGNORECASE)
# A list marker opening a line ("- ", "* ", "1. "), as a board cell must not show it.
_LIST_MARKER = re.compile(r"^\s*(?:(?:[-*+•]|\d+[.)])\s+)+")
# The "(Decisions)" a resolved item carries to say where it came from.
_SECTION_SUFFIX = re.compile(
    r" \((?:Decisions|Files / Artifacts|Open Questions|Next Actions|Continues From)\)$"
)


def canonical_section(title: str) -> str | None:
    """The template section a heading names (``files/artifacts`` is Files / Artifacts)."""
    key = re.sub(r"\s*/\s*", " / ", " ".join(title.split())).lower()
    for name in SECTIONS:
        if name.lower() == key:
            return name
    return None


def split_marker(item: str) -> tuple[str | None, str]:
    """(the item's marker, lower case, or None; the item's text without it). The marker
    may open the item or close it."""
    match = _MARKER.match(item)
    if match:
        return match.group(1).lower(), item[match.end() :].strip()
    match = _END_MARKER.search(item)
    if match and match.start() > 0:
        return match.group(1).lower(), item[: match.start()].strip()
    return None, item.strip()


def item_key(item: str) -> str:
    """What makes two items the same item: text without marker, case, spacing, end dots."""
    _, text = split_marker(item)
    return " ".join(text.lower().split()).rstrip(".。;；")


@dataclass(slots=True)
class Snapshot:
    metadata: dict[str, str] = field(default_factory=dict)  # template fields, then others
    sections: dict[str, list[str]] = field(default_factory=dict)
    extra: list[tuple[str, list[str]]] = field(default_factory=list)  # sections not ours
    preamble: list[str] = field(default_factory=list)  # text between the title and ## Metadata
    metadata_notes: list[str] = field(default_factory=list)  # non-row lines under Metadata
    # The frontmatter's lines as written; None: the snapshot is rendered without one.
    properties: list[str] | None = None
    # The row Summary memvault last derived (frontmatter ``board-summary``); None when it
    # has not recorded one. A row whose Summary differs was written by someone else.
    board_summary: str | None = None

    @classmethod
    def parse(cls, text: str) -> Snapshot:
        snapshot = cls()
        original = text
        lines, text = frontmatter.split(text)
        if lines is not None:
            snapshot.properties = [line.rstrip("\r") for line in lines]
            try:
                recorded = frontmatter.read(original).get(BOARD_SUMMARY)
            except frontmatter.FrontmatterError:
                recorded = None
            if isinstance(recorded, str):
                snapshot.board_summary = recorded
        heading: str | None = None
        body: list[str] = []
        titled = False
        fenced = False

        def flush() -> None:
            if heading is None:
                snapshot.preamble = _trim(body)
                return
            name = canonical_section(heading)
            if name is None and heading.lower() == "metadata":
                for line in body:
                    cells = [c.strip() for c in line.strip().strip("|").split("|")]
                    if line.strip().startswith("|") and len(cells) == 2:
                        if cells[0] not in ("Field", "") and not set(cells[0]) <= set("-: "):
                            snapshot.metadata[cells[0]] = cells[1]
                    elif line.strip():
                        snapshot.metadata_notes.append(line)
            elif name is None:
                snapshot.extra.append((heading, _trim(body)))
            else:
                items = _paragraphs(body) if name == CONTEXT else _items(body)
                snapshot.sections.setdefault(name, []).extend(items)

        # Split on newlines only: U+2028 and friends inside a line are not line breaks.
        for line in text.replace("\r\n", "\n").split("\n"):
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            if not fenced and line.startswith("## "):
                flush()
                heading, body = line[3:].strip(), []
            elif not fenced and not titled and heading is None and line.startswith("# "):
                titled = True  # the title; the file name says the same
            else:
                body.append(line)
        flush()
        return snapshot

    def items(self, section: str) -> list[str]:
        return self.sections.get(section, [])

    def render(self, session_id: str) -> str:
        lines = [f"# Session: {session_id}", ""]
        if self.preamble:
            lines += [*self.preamble, ""]
        lines += ["## Metadata", "", "| Field | Value |", "|---|---|"]
        others = [name for name in self.metadata if name not in METADATA_FIELDS]
        for name in (*METADATA_FIELDS, *others):
            value = " ".join(self.metadata.get(name, "").split())  # a cell holds one line
            lines.append(f"| {name} | {value.replace('|', '/')} |")
        if self.metadata_notes:
            lines += ["", *self.metadata_notes]
        for name in SECTIONS:
            lines += ["", f"## {name}", ""]
            items = self.items(name)
            if name == CONTEXT:
                body = _join_paragraphs(items) if items else [NONE]
            else:
                body = [f"- {item}" for item in items] if items else [NONE]
            lines += _no_headings("\n".join(body).split("\n"))
        for heading, body in self.extra:
            lines += ["", f"## {heading}", "", *body]
        text = "\n".join(lines) + "\n"
        return text if self.properties is None else self._with_frontmatter(session_id, text)

    def _with_frontmatter(self, session_id: str, body: str) -> str:
        """``body`` under the frontmatter, memvault's keys set from the Metadata table and
        only those lines changed; a block memvault cannot read is kept as it is."""
        text = "\n".join([frontmatter.FENCE, *(self.properties or []), frontmatter.FENCE, body])
        try:
            current = frontmatter.read(text)
        except frontmatter.FrontmatterError:
            return text
        changes = {
            key: value
            for key, value in self._properties(session_id, current).items()
            if current.get(key) != _plain(value)
        }
        return frontmatter.with_properties(text, changes) if changes else text

    def _properties(self, session_id: str, current: dict[str, Any]) -> dict[str, Any]:
        meta = self.metadata
        wanted: dict[str, Any] = {
            "status": meta.get("Status", "").strip().lower(),
            "agent": meta.get("Agent Name", "").strip(),
            "session": session_id,
            "started": _time(meta.get("Started At", "")),
            "updated": _time(meta.get("Updated At", "")),
            "project": meta.get("Project", "").strip(),
            BOARD_SUMMARY: self.board_summary,
        }
        wanted = {key: value for key, value in wanted.items() if value}
        tags = current.get("tags")
        listed = (
            [str(t) for t in tags]
            if isinstance(tags, list)
            else [t.strip() for t in str(tags or "").split(",") if t.strip()]
        )
        wanted["tags"] = listed if SESSION_TAG in listed else [*listed, SESSION_TAG]
        return wanted


SnapshotInput = Snapshot | str | Mapping[str, str | list[str]] | None


def as_snapshot(content: SnapshotInput) -> Snapshot:
    """Snapshot content from markdown (the template's sections, any subset) or from a
    mapping of section name → text or items."""
    if content is None:
        return Snapshot()
    if isinstance(content, Snapshot):
        return content
    if isinstance(content, str):
        return Snapshot.parse(content)
    snapshot = Snapshot()
    for title, value in content.items():
        name = canonical_section(title)
        if name is None:
            raise ValueError(
                f"unknown snapshot section {title!r}; use one of: {', '.join(SECTIONS)}"
            )
        body = value.splitlines() if isinstance(value, str) else [f"- {v}" for v in value]
        items = _paragraphs(body) if name == CONTEXT else _items(body)
        snapshot.sections.setdefault(name, []).extend(items)
    return snapshot


def merge(old: Snapshot, new: Snapshot) -> Snapshot:
    """Integrate ``new`` into ``old`` section by section; nothing old is silently lost.
    The result is a snapshot to write: it carries a frontmatter (the old one's lines)."""
    properties = old.properties if old.properties is not None else new.properties
    merged = Snapshot(
        metadata=dict(old.metadata),
        extra=list(old.extra),
        preamble=list(old.preamble or new.preamble),
        metadata_notes=list(old.metadata_notes or new.metadata_notes),
        properties=list(properties or []),
        board_summary=old.board_summary,
    )
    for key, value in new.metadata.items():
        if key not in ("Session ID", "Agent Name", "Started At") and value:
            merged.metadata[key] = value
    seen_extra = {heading for heading, _ in merged.extra}
    merged.extra += [(h, body) for h, body in new.extra if h not in seen_extra]
    resolved = list(old.items(SUPERSEDED))
    for name in SECTIONS:
        if name == SUPERSEDED:
            continue
        result = list(old.items(name))
        fresh = []
        for item in new.items(name):
            marker, text = split_marker(item)
            position = _find(result, item)
            if marker is not None:
                if position is not None:
                    result.pop(position)
                resolved.append(f"{marker} {text}" + (f" ({name})" if name != CONTEXT else ""))
            elif position is not None:
                result[position] = item
            else:
                fresh.append(item)
        # Current context reads newest first; lists keep their order and grow at the end.
        merged.sections[name] = fresh + result if name == CONTEXT else result + fresh
    for item in new.items(SUPERSEDED):
        if _find(resolved, item) is None:
            resolved.append(item)
    merged.sections[SUPERSEDED] = _unique(resolved)
    return merged


def dropped(old: Snapshot, merged: Snapshot) -> list[str]:
    """Old items that are neither in their section nor recorded as superseded/resolved."""
    missing = []
    recorded = {item_key(_SECTION_SUFFIX.sub("", i)) for i in merged.items(SUPERSEDED)}
    for name in SECTIONS:
        present = {item_key(item) for item in merged.items(name)}
        for item in old.items(name):
            key = item_key(item)
            if key not in present and key not in recorded:
                missing.append(f"{name}: {item}")
    return missing


def _find(items: list[str], item: str) -> int | None:
    key = item_key(item)
    for index, existing in enumerate(items):
        if item_key(existing) == key:
            return index
    return None


def _unique(items: list[str]) -> list[str]:
    seen, out = set(), []
    for item in items:
        key = item_key(item) + "|" + (split_marker(item)[0] or "")
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _items(body: list[str]) -> list[str]:
    """List items (``- x`` or ``* x``); lines that follow an item (a code block, a wrapped
    line) stay with it as written. ``None`` means none."""
    items: list[str] = []
    fenced = False
    for line in body:
        stripped = line.strip()
        starts_fence = stripped.startswith(("```", "~~~"))
        if fenced or starts_fence:
            if starts_fence:
                fenced = not fenced
            if items:
                items[-1] += "\n" + line.rstrip()
            else:
                items.append(line.rstrip())
            continue
        if not stripped or _NONE_ITEM.match(stripped.lstrip("-* ").strip()):
            continue
        if stripped[:2] in ("- ", "* "):
            items.append(stripped[2:].strip())
        elif items:
            items[-1] += "\n" + line.rstrip()
        else:
            items.append(stripped)
    return items


def _paragraphs(body: list[str]) -> list[str]:
    paragraphs, current = [], []
    for line in [*body, ""]:
        if line.strip():
            current.append(line.rstrip())
        elif current:
            text = "\n".join(current)
            if not _NONE_ITEM.match(text.strip()):
                paragraphs.append(text)
            current = []
    return paragraphs


def _join_paragraphs(paragraphs: list[str]) -> list[str]:
    lines: list[str] = []
    for paragraph in paragraphs:
        if lines:
            lines.append("")
        lines.extend(paragraph.split("\n"))
    return lines


def _no_headings(lines: list[str]) -> list[str]:
    """A section's lines with any that would be read back as a heading of its own (a line
    of an item or paragraph opening with ``## ``, outside a code block) escaped, so text
    given as one item never adds a section to the snapshot; shown, it reads the same."""
    kept, fenced = [], False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        kept.append("\\" + line if not fenced and line.startswith("## ") else line)
    return kept


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def unlisted(text: str) -> str:
    """``text`` without the list marker opening any of its lines (``- x`` → ``x``)."""
    return "\n".join(_LIST_MARKER.sub("", line) for line in text.split("\n"))


def summary_of(snapshot: Snapshot, limit: int = 200) -> str:
    """The board row's Summary: the gist of Current Context, on one line."""
    paragraphs = [p for p in snapshot.items(CONTEXT) if split_marker(p)[0] is None]
    text = " ".join(" ".join(map(unlisted, paragraphs)).split())
    if len(text) <= limit:
        return text
    out = ""
    for sentence in re.split(r"(?<=[.!?。！？])\s*", text):
        if out and len(out) + len(sentence) + 1 > limit:
            break
        out = f"{out} {sentence}".strip()
    return out if out and len(out) <= limit else text[: limit - 1] + "…"


def topic_of(snapshot: Snapshot, limit: int = 60) -> str:
    """A topic from the first sentence of Current Context, or "" when there is none."""
    context = snapshot.items(CONTEXT)
    if not context:
        return ""
    first = re.split(r"(?<=[.!?。！？])\s*|\n", unlisted(context[0]).strip())[0]
    first = first.strip().rstrip(".。")
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _time(text: str) -> datetime | str:
    """A board time as a datetime (Obsidian's date & time property), or the text as it is
    when it is not one."""
    try:
        return datetime.strptime(text.strip(), _TIME_FORMAT)
    except ValueError:
        return text.strip()


def _plain(value: Any) -> Any:
    """``value`` as ``frontmatter.read`` gives it back, to tell whether a key changes."""
    if isinstance(value, datetime):
        return value.isoformat(timespec="minutes")
    return value
