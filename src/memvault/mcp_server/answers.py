"""What a tool hands back: structured content with a readable text, or an error naming the
problem.

Every tool answers with both. Clients that read ``structuredContent`` get the same JSON the
REST routes give; the text is what a model reads when its host shows only text, so it
carries the ids a follow-up call needs.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

from memvault.vault.lifecycle import Report


class NotFound(ToolError):
    """The id, session or project asked for is not in memory."""


class Refused(ToolError):
    """A board operation was refused or could not be completed; the files are as they were."""

    def __init__(self, report: Report) -> None:
        super().__init__(report.message)
        self.report = report


def answer(data: dict[str, Any], text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def report_answer(report: Report) -> CallToolResult:
    """A board operation's report, or the reason it was not done as a tool error."""
    if not report.ok:
        raise Refused(report)
    lines = [report.message]
    for key, value in report.details.items():
        if value not in ([], {}, None, False) and key != "dryRun":
            lines.append(f"{key}: {_listed(value)}")
    return answer(report.to_dict(), "\n".join(lines))


def _listed(value: Any) -> str:
    if isinstance(value, dict):  # organize's protected rows: id → who references it
        return "; ".join(f"{key} (by {_listed(refs)})" for key, refs in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    return str(value)
