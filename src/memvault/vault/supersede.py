"""Marking a fragment superseded: a newer fragment replaces what it says.

The older file keeps everything it holds (a person may still want the history) and says,
in its frontmatter, which fragment replaced it and when (``superseded_by``,
``superseded_on``); its summary opens with ``[superseded]`` so every list and search shows
it, and its body opens with a fact line naming the newer one. The write happens under the
fragments folder's lock, atomically, and is verified; the file as it was comes back when
it does not read back as meant.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from memvault.vault import frontmatter
from memvault.vault.edit import read_to_change
from memvault.vault.files import memory_lock, write_atomic
from memvault.vault.fragments import (
    SUPERSEDED_BY,
    SUPERSEDED_MARK,
    SUPERSEDED_ON,
    Fragment,
    retired_mark,
)


def mark_superseded(folder: Path, path: Path, newer_id: str, day: dt.date | None = None) -> bool:
    """Mark the fragment at ``path`` (inside ``folder``) superseded by ``newer_id``; False
    when it says so already. ``FileNotFoundError`` when the file is not there;
    ``FragmentRefused`` when its frontmatter cannot be read."""
    day = day or dt.date.today()
    with memory_lock(folder):
        text, fragment = read_to_change(path)
        if fragment.properties.get(SUPERSEDED_BY) == newer_id:
            return False
        changes: dict[str, object] = {SUPERSEDED_BY: newer_id, SUPERSEDED_ON: day.isoformat()}
        summary = " ".join(fragment.summary.split())
        if retired_mark(summary) is None:
            changes["summary"] = f"{SUPERSEDED_MARK} {summary}".strip()
        updated = frontmatter.with_properties(text, changes)
        newline = "\r\n" if "\r\n" in text else "\n"
        line = f"- {SUPERSEDED_MARK} by {newer_id} on {day.isoformat()}"
        body = fragment.body.lstrip("\r\n")
        updated = frontmatter.replace_body(updated, line + newline + body)
        write_atomic(path, updated)
        try:
            written = Fragment.read(path)
            if written.properties.get(SUPERSEDED_BY) != newer_id or line[2:] not in written.body:
                raise OSError(f"could not verify {path.name}: the mark did not read back")
        except BaseException:
            write_atomic(path, text)
            raise
        return True


def superseded_by(path: Path) -> str | None:
    """The id of the fragment that replaced the one at ``path``, if any."""
    try:
        value = Fragment.read(path).properties.get(SUPERSEDED_BY)
    except (OSError, UnicodeDecodeError, frontmatter.FrontmatterError):
        return None
    return str(value) if value else None
