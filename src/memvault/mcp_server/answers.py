"""What a tool hands back: structured content with a readable text, or an error naming the
problem.

Every tool answers with both. Clients that read ``structuredContent`` get the same JSON the
REST routes give; the text is what a model reads when its host shows only text, so it
carries the ids a follow-up call needs.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

from memvault.errors import InvalidInput, StoreFailure
from memvault.vault.board import BoardFormatError
from memvault.vault.lifecycle import Report
from memvault.vault.owner import VaultWriteQueued


class ToolRefusal(ToolError):
    """A tool's answer that it will not do what was asked; ``status`` is the HTTP status
    the same refusal carries when the tool is called over REST."""

    status: ClassVar[int]

    def details(self) -> dict[str, Any]:
        """What a REST answer carries besides the error's words."""
        return {}


class NotFound(ToolRefusal):
    """The id, session or project asked for is not in memory."""

    status = 404


class BoardRefused(ToolRefusal):
    """A board operation was refused or could not be completed; the files are as they were."""

    status = 409

    def __init__(self, report: Report) -> None:
        super().__init__(report.message)
        self.report = report

    def details(self) -> dict[str, Any]:
        return {"report": self.report.to_dict()}


# memvault's errors a tool leaves to the server, told to the client in their own words;
# any other error is a bug, which the SDK reports as one.
TOLD = (InvalidInput, BoardFormatError, StoreFailure, VaultWriteQueued)


def tool_error(exc: Exception) -> ToolError:
    """``exc`` (one of ``TOLD``) as the tool error a client reads."""
    return ToolError(exc.message if isinstance(exc, InvalidInput) else str(exc))


def answer(data: dict[str, Any], text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def report_answer(report: Report) -> CallToolResult:
    """A board operation's report, or the reason it was not done as a tool error."""
    if not report.ok:
        raise BoardRefused(report)
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
