"""memvault's MCP server, built with the official SDK: the tool table, and the server that
serves it over stdio or streamable HTTP.

The tools are the plain functions of ``memory_tools``, ``timeline`` and ``board_tools``;
each is bound to a ``Memory`` and registered with its name, description and annotations.
Errors a caller can act on (bad arguments, a refused operation, an unknown id) come back as
tool errors whose text names the problem; anything else is logged and reported without
details.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import ValidationError

from memvault import __version__
from memvault.ingest.envelope import refuse_nul
from memvault.language import DEFAULT, Strings, strings
from memvault.mcp_server import board_tools, memory_tools, timeline
from memvault.mcp_server.answers import TOLD, tool_error
from memvault.memory import Memory

INSTRUCTIONS = """\
memvault keeps an AI coding agent's memory as markdown in the user's Obsidian vault.
Read at start: before every task, call memory_recall with the request and the project, and
show its first line ({read_line}) to the user; go deeper with memory_search (L0),
memory_get (L1) and memory_project (L2).
Write at end: when a task produced a decision, a lesson or something needed next time, call
memory_save in the same turn, and end the reply with {write_report}.
The session board (memory/index.md) has its own tools; their descriptions name the phrases
users type for them, e.g. 更新 memory session → memory_session_update, 整理 memory →
memory_organize."""


def _worded(text: str, words: Strings) -> str:
    """``text`` with the report lines of the server's language (``{read_report}``, the
    read line as the rules give it; ``{read_line}``, its start; ``{write_report}``)."""
    return (
        text.replace("{read_report}", words.read_report)
        .replace("{read_line}", words.read_report.split(" → ")[0] + " → …")
        .replace("{write_report}", words.write_report)
    )


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One tool: the function that does it and how a host should treat it."""

    function: Callable[..., CallToolResult]
    title: str
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False

    @property
    def name(self) -> str:
        return self.function.__name__


TOOLS = (
    ToolEntry(memory_tools.memory_search, "Search memory (L0)", read_only=True),
    ToolEntry(memory_tools.memory_get, "Read one memory (L1)", read_only=True),
    ToolEntry(memory_tools.memory_project, "A project's memory (L2)", read_only=True),
    ToolEntry(memory_tools.memory_recall, "Recall memory for a task", read_only=True),
    ToolEntry(timeline.memory_timeline, "Recent activity, in order", read_only=True),
    ToolEntry(memory_tools.memory_save, "Save a memory fragment"),
    ToolEntry(memory_tools.memory_edit, "Edit a memory fragment"),
    ToolEntry(memory_tools.memory_delete, "Delete a memory fragment", destructive=True),
    ToolEntry(memory_tools.memory_governance_delete, "Delete memory fragments", destructive=True),
    ToolEntry(board_tools.memory_sessions, "The session board", read_only=True),
    ToolEntry(board_tools.memory_session_register, "Register a session"),
    ToolEntry(board_tools.memory_session_update, "Update a session"),
    ToolEntry(board_tools.memory_session_continue, "Continue a session", idempotent=True),
    ToolEntry(board_tools.memory_session_release, "Release a continuation", idempotent=True),
    ToolEntry(board_tools.memory_session_archive, "Archive a session", destructive=True),
    ToolEntry(board_tools.memory_organize, "Organize the board", destructive=True),
)


class MemoryServer(MCPServer):
    """An ``MCPServer`` that refuses arguments its tools do not take and says briefly which
    arguments were wrong, instead of echoing a validation dump with the caller's values."""

    def __init__(self, tools: list[Tool], words: Strings) -> None:
        with _logging_left_alone():
            super().__init__(
                "memvault",
                version=__version__,
                instructions=_worded(INSTRUCTIONS, words),
                tools=tools,
            )
        self._arguments = {tool.name: frozenset(tool.parameters["properties"]) for tool in tools}

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        known = self._arguments.get(name)
        unknown = sorted(set(arguments) - known) if known is not None else []
        if unknown:
            raise ToolError(
                f"Error executing tool {name}: unknown argument(s) {', '.join(unknown)}; "
                f"it takes {', '.join(sorted(known or ())) or 'none'}"
            )
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                problems = invalid_arguments(exc.__cause__)
                raise ToolError(f"Error executing tool {name}: {problems}") from exc.__cause__
            raise


def build_server(
    memory: Memory | Callable[[], Memory], language: str | None = None
) -> MemoryServer:
    """The MCP server over ``memory``: an open ``Memory``, or a function returning the one
    to use at the time of a call (the HTTP app opens its memory only when it starts). Its
    descriptions quote the report lines in ``language`` (an open memory's setting when
    not given)."""
    if isinstance(memory, Memory):
        language = language or memory.settings.language
        source: Callable[[], Memory] = lambda: memory  # noqa: E731
    else:
        source = memory
    words = strings(language or DEFAULT)
    return MemoryServer([_tool(entry, source, words) for entry in TOOLS], words)


def http_endpoint(server: MemoryServer, *, host: str, max_body_bytes: int) -> StreamableHTTPASGIApp:
    """The streamable HTTP endpoint as an ASGI app, for a route of the caller's app.

    Stateless, with JSON answers: every POST stands alone, so nothing is kept between
    requests and any client (or curl) can call it. ``server.session_manager.run()`` must
    be running around it (the app's lifespan). On a loopback host the SDK also checks the
    Host and Origin headers, against DNS rebinding.
    """
    server.streamable_http_app(
        stateless_http=True,
        json_response=True,
        host=host,
        max_request_body_size=max_body_bytes,
    )
    return StreamableHTTPASGIApp(server.session_manager)


def invalid_arguments(error: ValidationError) -> str:
    """``query: Field required; limit: Input should be less than or equal to 100``."""
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems)


def _tool(entry: ToolEntry, memory: Callable[[], Memory], words: Strings) -> Tool:
    tool = Tool.from_function(
        _bound(entry.function, memory),
        name=entry.name,
        title=entry.title,
        description=_worded(_description(entry.function), words),
        annotations=ToolAnnotations(
            title=entry.title,
            read_only_hint=entry.read_only,
            destructive_hint=entry.destructive if not entry.read_only else None,
            idempotent_hint=entry.idempotent or entry.read_only,
            open_world_hint=False,
        ),
    )
    tool.parameters["additionalProperties"] = False  # unknown arguments are refused
    return tool


def _description(function: Callable[..., Any]) -> str:
    """The docstring, its paragraphs unwrapped: hosts show descriptions as they are."""
    paragraphs = inspect.cleandoc(function.__doc__ or "").split("\n\n")
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in paragraphs)


def _bound(function: Callable[..., CallToolResult], memory: Callable[[], Memory]) -> Callable:
    """``function`` without its first parameter (the memory), for the SDK to describe and
    call; memvault's own errors become tool errors that keep their message."""
    signature = inspect.signature(function, eval_str=True)

    @functools.wraps(function)
    def tool(**arguments: Any) -> CallToolResult:
        try:
            refuse_nul(arguments)  # what no store can hold, refused alike on both engines
            return function(memory(), **arguments)
        except TOLD as exc:
            raise tool_error(exc) from exc

    tool.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:]
    )
    return tool


@contextmanager
def _logging_left_alone() -> Iterator[None]:
    """The SDK configures the root logger when a server is made; memvault leaves logging to
    the program it runs in (the HTTP server, or stderr for stdio)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
