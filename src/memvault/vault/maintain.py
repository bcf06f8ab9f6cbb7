"""Fragment maintenance: archiving what is no longer used, summarizing large projects.

- A fragment whose importance is below 0.3 and that nobody has read for 90 days moves to
  ``_archive/`` in the fragments folder: still there, searchable on request, out of the way.
- A project with more than 20 fragments gets an L2 summary, ``_projects/{project}.md``: its
  fragments' summaries, most important and most recent first, near-duplicates merged. It is
  extractive (no LLM needed) and rewritten only when what it says changes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
from dataclasses import dataclass
from pathlib import Path

from memvault.analyzer import distinct
from memvault.platforms import windows_safe_stem
from memvault.vault import frontmatter
from memvault.vault.files import OutsideFolder, inside, memory_lock, read_text, write_atomic
from memvault.vault.fragments import ARCHIVE, PROJECTS, free_path, safe_part

SUMMARY_TAG = "agent-memory-summary"
SUMMARY_LINES = 40
ALIKE = 0.8


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fragment as maintenance sees it."""

    path: Path
    project: str
    summary: str
    importance: float
    date: str  # YYYY-MM-DD
    last_used: dt.date  # last read, or its date when never read


def archive(folder: Path, candidates: list[Candidate]) -> list[tuple[Path, Path]]:
    """Move each candidate into ``_archive/`` (same name, a suffix if taken)."""
    moved = []
    target = folder / ARCHIVE
    with memory_lock(folder):
        for candidate in candidates:
            source = _own(folder, candidate.path)
            if not source.exists():
                continue
            target.mkdir(exist_ok=True)
            destination = free_path(target, source.name)
            source.rename(destination)
            moved.append((candidate.path, destination))
    return moved


def _own(folder: Path, path: Path) -> Path:
    """``path``, checked to be a file of ``folder`` (``OutsideFolder`` otherwise)."""
    try:
        relative = path.relative_to(folder)
    except ValueError:
        raise OutsideFolder(f"{str(path)!r} is not in {folder.name}/") from None
    return inside(folder, relative)


def should_archive(
    candidate: Candidate, *, today: dt.date, importance_below: float, unused_days: int
) -> bool:
    return (
        candidate.importance < importance_below
        and (today - candidate.last_used).days >= unused_days
    )


def summary_path(folder: Path, project: str) -> Path:
    """``_projects/{project}.md``; a project whose name is not a safe file name as it is
    (``a/b``, ``a:b``, or ``CON``, which Windows keeps for a device) gets a short hash too,
    so no two projects share a file."""
    name = windows_safe_stem(safe_part(project) or "general")
    if name != project:
        name += (
            " "
            + hashlib.blake2b(project.encode("utf-8", "surrogatepass"), digest_size=3).hexdigest()
        )
    return inside(folder / PROJECTS, f"{name}.md")


def read_summary(folder: Path, project: str) -> str | None:
    text = read_text(summary_path(folder, project))
    if text is None:
        return None
    try:
        written_for = frontmatter.read(text).get("project")
    except frontmatter.FrontmatterError:
        return None
    if str(written_for) != project:
        return None  # not this project's (a file renamed or edited by hand)
    return frontmatter.split(text)[1].strip()


def write_summary(folder: Path, project: str, fragments: list[Candidate], today: dt.date) -> bool:
    """Write or refresh the project's L2 summary; False when it already says the same."""
    ordered = sorted(fragments, key=lambda c: (c.importance, c.date), reverse=True)
    said = [text for candidate in ordered if (text := " ".join(candidate.summary.split()))]
    lines = list(itertools.islice(distinct(said, str, ALIKE), SUMMARY_LINES))
    body = "\n".join(f"- {line}" for line in lines) + "\n"
    path = summary_path(folder, project)
    with memory_lock(folder):
        current = read_text(path)
        if current is not None and frontmatter.split(current)[1] == body:
            return False
        properties = {
            "tags": [SUMMARY_TAG],
            "project": project,
            "date": today,
            "fragments": len(fragments),
        }
        head = [
            frontmatter.FENCE,
            *(frontmatter.render_property(k, v) for k, v in properties.items()),
        ]
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, "\n".join([*head, frontmatter.FENCE]) + "\n" + body)
    return True
