"""The archive: ``memory/archive/<id>/index.md`` (metadata) beside ``session.md`` (snapshot)."""

from __future__ import annotations

from memvault.domain import BoardRow
from memvault.vault.board import row_cells

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
    # The row's own cells, in board order (its Status is the Original Status), then when.
    values = (*row_cells(row), archived_at)
    lines = [f"# Archived Session: {row.session_id}", "", "## Metadata", "", "| Field | Value |"]
    lines.append("|---|---|")
    for name, value in zip(FIELDS, values, strict=True):
        lines.append(f"| {name} | {value.replace('|', '/')} |")
    lines += ["", "## Files", "", "- Session: ./session.md", ""]
    return "\n".join(lines)
