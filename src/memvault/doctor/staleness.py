"""The doctor's look at memory that cites files no longer there: the running server's list
of fragments every cited file of which is gone from their project's folder."""

from __future__ import annotations

import urllib.error
from typing import Any

from memvault.config import Settings
from memvault.doctor.finding import OK, WARN, Finding
from memvault.doctor.server import get_json

LISTED = 5  # fragments named in the finding; the viewer's fragments page lists them all


def check_stale_fragments(settings: Settings, health: dict[str, Any] | None) -> Finding:
    """Fragments whose every cited file is gone, with the command that deletes each."""
    if health is None:
        return Finding("cited files", OK, "not checked: no server answers")
    try:
        found = get_json(
            f"{settings.server_url}/agentmemory/stale-fragments", secret=settings.secret_value()
        )
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return Finding("cited files", WARN, f"the server did not list stale fragments: {exc}")
    gone = found.get("fragments") or []
    if not gone:
        return Finding("cited files", OK, "every fragment that cites files has one still there")
    named = "; ".join(f"{g['id']} ({', '.join(g['files'][:3])})" for g in gone[:LISTED])
    more = (
        f" and {len(gone) - LISTED} more (the viewer's fragments page)"
        if len(gone) > LISTED
        else ""
    )
    return Finding(
        "cited files",
        WARN,
        f"{len(gone)} fragment(s) cite only files gone from their project: {named}{more}",
        "; ".join(g["fix"] for g in gone[:LISTED]),
    )
