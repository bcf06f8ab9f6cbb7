"""Memory fragments: one markdown file per long-term memory, in the vault's fragments folder.

A fragment is named ``{project} - {YYYY-MM-DD} - {description}.md`` and carries YAML
properties (``tags`` with ``agent-memory``, ``project``, ``date``, ``summary``,
``importance``, optional ``confidence`` and ``source``) over a compressed body of short fact
lines. This module holds those rules: safe names, reading a fragment, and the checks that
``memvault fragments check`` reports for files written by hand.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memvault.analyzer import kept
from memvault.platforms import windows_name_problem
from memvault.vault import frontmatter
from memvault.vault.files import OutsideFolder, inside, read_text, refused_link
from memvault.vault.snapshot import MARKERS

TAG = "agent-memory"
# Folders of the fragments folder that hold no live fragments: the archive and the
# projects' L2 summaries.
ARCHIVE = "_archive"
PROJECTS = "_projects"
RESERVED = (ARCHIVE, PROJECTS)
FORBIDDEN_FIELDS = ("type", "related_fragments")

# A fragment a newer one replaces: the newer one's id, and the day it was marked. Its
# summary and body open with ``[superseded]`` too, so a person and a search see it.
SUPERSEDED_BY = "superseded_by"
SUPERSEDED_ON = "superseded_on"
SUPERSEDED_MARK = "[superseded]"

NAME_LIMIT = 180  # bytes before the extension: room for a suffix, well under 255
PROJECT_LIMIT = 80  # bytes of the name a project may take

_UNSAFE = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f\x7f.]+')
WIKILINK = re.compile(r"\[\[[^\]\n]+\]\]")
# Obsidian's tags are letters, digits, _, - and / (nested tags); spaces end a tag.
_NOT_IN_TAGS = re.compile(r"[^\w/-]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_NAME = re.compile(r"^(?P<project>.+?) - (?P<date>\d{4}-\d{2}-\d{2}) - (?P<description>.+)$")
# Report-style heading trees the compressed form replaces (现象 / 根因 / 经验教训 and kin).
_STORY_HEADINGS = re.compile(r"^#{1,6}\s*(现象|根因|原因|经验教训|教训|解决方案|背景|过程)\s*$")
_MARK = r"\[(?:" + "|".join(MARKERS) + r")\]"
_RETIRED = re.compile(rf"^({_MARK})|({_MARK})$", re.IGNORECASE)
_LONG_LINE = 160  # characters: about two lines in Obsidian's reading view


def retired_mark(summary: str) -> str | None:
    """The mark that says a memory no longer holds (``[superseded]``, ``[resolved]``,
    ``[done]``, or their Chinese words, as the board's snapshots take them), opening or
    closing its summary; None when it holds."""
    found = _RETIRED.search(summary.strip())
    return (found[1] or found[2]).lower() if found else None


def safe_part(text: str) -> str:
    """A piece of a file name that is valid on every OS and inside Obsidian links."""
    text = unicodedata.normalize("NFC", text)
    text = _UNSAFE.sub(" ", text)
    return " ".join(text.split()).strip(" -")


def tag_name(tag: str) -> str:
    """``tag`` as Obsidian takes a tag: no leading ``#``, no spaces (``needs review`` is
    ``needs-review``), only letters, digits, ``_``, ``-`` and ``/`` (anything else becomes
    ``-``), and not only digits. ``ValueError`` naming the tag when nothing like a tag is
    left of it (``2026``, ``#``, ``!!``)."""
    text = unicodedata.normalize("NFC", tag).strip().lstrip("#")
    text = _NOT_IN_TAGS.sub("-", text)
    text = re.sub(r"-{2,}", "-", re.sub(r"/{2,}", "/", text)).strip("-/")
    if not text or text.isdigit():
        raise ValueError(
            f"tag {tag!r} is not a tag Obsidian takes: use letters, digits, _, - and /, "
            "not only digits"
        )
    return text


def fragment_name(project: str, date: str, description: str) -> str:
    """``{project} - {date} - {description}.md``, made safe and bounded."""
    if not _DATE.fullmatch(date):
        raise ValueError(f"date must be YYYY-MM-DD, not {date!r}")
    project_part = _bounded(safe_part(project) or "general", PROJECT_LIMIT)
    room = NAME_LIMIT - len(f"{project_part} - {date} - ".encode())
    description_part = _bounded(_unpunctuated(safe_part(description)) or "note", room)
    return f"{project_part} - {date} - {description_part}.md"


def _bounded(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, on a character boundary."""
    cut = text.encode()[:limit].decode("utf-8", errors="ignore")
    return _unpunctuated(cut) or text[:1]


def _unpunctuated(text: str) -> str:
    """``text`` without the punctuation (of any script: ``。``, ``！``, ``、``, ``…``),
    spaces and dashes it ends with: a sentence's full stop is no part of a title."""
    end = len(text)
    while end and (text[end - 1] in " -" or unicodedata.category(text[end - 1])[0] == "P"):
        end -= 1
    return text[:end]


def free_path(folder: Path, name: str) -> Path:
    """``folder/name``, or ``… 2.md``, ``… 3.md`` when taken: the same inputs give the same
    names in the same order."""
    path = folder / name
    stem, n = name.removesuffix(".md"), 1
    while path.exists():
        n += 1
        path = folder / f"{stem} {n}.md"
    return path


@dataclass(slots=True)
class Fragment:
    path: Path
    properties: dict[str, Any]
    body: str

    @classmethod
    def read(cls, path: Path) -> Fragment:
        """The fragment at ``path`` as it is now. Its text is read every time; a text read
        before is not parsed again (``_parsed``): writing one fragment compares it with
        all of its project's, and parsing their YAML each time made a vault's writes cost
        the square of its size."""
        text = read_text(path)
        if text is None:
            raise FileNotFoundError(path)
        properties, body = _parsed(text)
        # The cached properties are shared: each reader gets its own lists to change.
        return cls(path, {k: _copied(v) for k, v in properties.items()}, body)

    @property
    def project(self) -> str:
        return str(self.properties.get("project") or "")

    @property
    def summary(self) -> str:
        return str(self.properties.get("summary") or "")


# A vault's fragments, parsed: a fragment memvault writes is about a kilobyte, so a few
# tens of MB; 8,192 notes of the longest kept would take 256 MiB. A longer note is no
# fragment memvault wrote, and is parsed each time.
@kept(texts=8192, chars=32 * 1024)
def _parsed(text: str) -> tuple[dict[str, Any], str]:
    """A fragment's properties and body (shared: ``Fragment.read`` copies them). A text
    that fails to parse is not kept: it is parsed again, and fails again, each time."""
    _, body = frontmatter.split(text)
    return frontmatter.read(text), body


def _copied(value: Any) -> Any:
    """A property value (YAML's plain data) that shares no list, set or mapping."""
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, set):
        return set(value)  # YAML's !!set: of keys, which are never lists
    return value


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    severity: str  # "error": breaks a rule; "warning": not in the compressed form
    rule: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(slots=True)
class CheckReport:
    files: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


def live_fragment_files(folder: Path) -> list[Path]:
    """The fragment files of ``folder`` in name order: not the archive, not the projects'
    summaries, nothing in hidden folders (an editor's or a sync tool's, not ours), no
    symbolic link leading out of the vault ``folder`` sits in; a link to a folder is not
    followed. Every write lists them, so only a link is resolved, not every path."""
    if not folder.is_dir() or refused_link(folder.parent, folder, "fragments folder"):
        return []
    return sorted(_markdown_files(folder.parent, folder, top=True))


def _markdown_files(vault: Path, directory: Path, *, top: bool) -> Iterator[Path]:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return  # a folder that cannot be listed holds nothing readable
    for entry in entries:
        if entry.name.startswith(".") or (top and entry.name in RESERVED):
            continue
        path = directory / entry.name
        if entry.is_dir(follow_symlinks=False):
            yield from _markdown_files(vault, path, top=False)
        elif entry.name.endswith(".md") and _is_fragment_file(vault, entry, path):
            yield path


def _is_fragment_file(vault: Path, entry: os.DirEntry[str], path: Path) -> bool:
    """A file, or a link to one inside the vault (a loop of links leads nowhere)."""
    if entry.is_symlink() and refused_link(vault, path, "fragment"):
        return False
    try:
        return entry.is_file()
    except OSError:
        return False


def check_folder(folder: Path, root: Path | None = None) -> CheckReport:
    """Check every ``.md`` file under ``folder`` (the archive included); a link leading
    out of the folder is not followed."""
    report = CheckReport()
    root = root or folder
    for path in sorted(folder.rglob("*.md")):
        parts = path.relative_to(folder).parts
        if parts[0] == PROJECTS or any(part.startswith(".") for part in parts):
            continue
        try:
            inside(folder, path.relative_to(folder))
        except OutsideFolder:
            continue  # a link to a note of the vault's elsewhere: a person's, not a fragment
        report.files += 1
        report.problems += check_file(path, root)
    return report


def check_file(path: Path, root: Path) -> list[Problem]:
    where = str(path.relative_to(root))
    problems: list[Problem] = []

    def error(rule: str, message: str) -> None:
        problems.append(Problem(where, "error", rule, message))

    def warn(rule: str, message: str) -> None:
        problems.append(Problem(where, "warning", rule, message))

    try:
        text = read_text(path) or ""
    except UnicodeDecodeError:
        error("encoding", "not UTF-8 text: save it as UTF-8")
        return problems
    lines, body = frontmatter.split(text)
    if lines is None:
        error("frontmatter", "no properties: a fragment starts with a --- YAML block ---")
        props: dict[str, Any] = {}
    else:
        try:
            props = frontmatter.read(text)
        except frontmatter.FrontmatterError as exc:
            error("frontmatter", str(exc))
            return problems
    for name in FORBIDDEN_FIELDS:
        if name in props:
            error(f"forbidden-{name}", f"`{name}` is not used in fragments; remove it")
    links = WIKILINK.findall(body)
    if links:
        error("wikilinks", f"fragments are plain text, not a linked graph: {', '.join(links[:3])}")
    if lines is not None:
        _check_properties(props, error, warn)
    _check_body(body, warn)
    for part in path.relative_to(root).parts:
        unfit = windows_name_problem(part)
        if unfit:  # a vault synced to a Windows machine cannot hold it there
            warn("windows-name", f"{unfit}: rename it")
    match = _NAME.match(path.stem)
    if not match:
        warn("file-name", "name it `{project} - {YYYY-MM-DD} - {description}.md`")
    elif props.get("project") and safe_part(str(props["project"])) != match["project"]:
        warn("file-name", f"the name's project {match['project']!r} differs from `project`")
    return problems


def _check_properties(props: dict[str, Any], error, warn) -> None:
    tags = props.get("tags")
    tag_list = tags if isinstance(tags, list) else [t.strip() for t in str(tags or "").split(",")]
    if TAG not in tag_list:
        error("tags", f"`tags` must include {TAG}")
    if not isinstance(tags, list) and tags is not None:
        warn("tags", "write `tags` as a list")
    if not str(props.get("project") or "").strip():
        error("project", "`project` is required")
    date = props.get("date")
    if not isinstance(date, str) or not _DATE.fullmatch(date):
        error("date", "`date` must be YYYY-MM-DD")
    summary = props.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        error("summary", "`summary` (one sentence, used to decide relevance) is required")
    elif "\n" in summary.strip():
        warn("summary", "`summary` should be one sentence on one line")
    for name, required in (("importance", True), ("confidence", False)):
        value = props.get(name)
        if value is None:
            if required:
                error(name, f"`{name}` (a number from 0 to 1) is required")
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            error(name, f"`{name}` must be a number from 0 to 1, not {value!r}")


def _check_body(body: str, warn) -> None:
    long_lines = 0
    for line in body.split("\n"):
        stripped = line.strip()
        if stripped.startswith("# "):
            warn("title-heading", "no title heading: the file name is the title")
        if _STORY_HEADINGS.match(stripped):
            warn("heading-tree", f"use fact lines instead of report headings ({stripped})")
        if len(stripped) > _LONG_LINE and not stripped.startswith(("```", "|")):
            long_lines += 1
    if long_lines:
        warn(
            "narrative",
            f"{long_lines} line(s) longer than about two lines: compress them "
            "into `- key: value` facts",
        )
