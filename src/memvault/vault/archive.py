"""The archive: ``memory/archive/<id>/index.md`` (metadata) beside ``session.md`` (snapshot)."""

from __future__ import annotations

from memvault.vault.board import BoardRow, format_references

FIELDS = (
    "Session ID",
    "Agent Name",
    "Topic",
    "Summary",
    "Keywords",
    "Original Status",
    "Referenced By",
    "Started At",
    "Updated At",
    "Archived At",
)


def render_archive_index(row: BoardRow, archived_at: str) -> str:
    values = (
        row.session_id,
        row.agent_name,
        row.topic,
        row.summary,
        row.keywords,
        row.status,
        format_references(row.referenced_by),
        row.started_at,
        row.updated_at,
        archived_at,
    )
    lines = [f"# Archived Session: {row.session_id}", "", "## Metadata", "", "| Field | Value |"]
    lines.append("|---|---|")
    for name, value in zip(FIELDS, values, strict=True):
        lines.append(f"| {name} | {value.replace('|', '/')} |")
    lines += ["", "## Files", "", "- Session: ./session.md", ""]
    return "\n".join(lines)
