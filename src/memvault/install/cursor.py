"""Cursor: ``hooks.json`` (version 1), ``mcp.json`` and a project rule.

User scope writes ``~/.cursor/hooks.json`` and ``~/.cursor/mcp.json``. Cursor keeps user
rules in its settings, not in a file, so the agent rules are installed only for a project,
as ``<project>/.cursor/rules/memvault.mdc``.

Hook events: :data:`STABLE_EVENTS` by default, :func:`events` with ``all_events`` for a
Cursor that knows the newer ones. Either way each agent action is hooked once: postToolUse
and the per-kind after-hooks it covers are never registered together.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from memvault.install import rules
from memvault.install.commands import Commands, is_memvault_hook, mcp_servers, strip_events
from memvault.install.files import (
    Artifact,
    ConfigError,
    JsonStyle,
    Stripped,
    expect,
    load_json,
)

HOST = "cursor"
TIMEOUT_SECONDS = 10

# Cursor rejects a whole hooks.json that names an event the running build does not know
# (memvault's hooks and the user's own all stop), so the default is the events every Cursor
# build with hooks knows: the ones of its hooks docs of the 1.7 era (late 2025).
STABLE_EVENTS = (
    "beforeSubmitPrompt",
    "afterShellExecution",
    "afterMCPExecution",
    "afterFileEdit",
    "stop",
    "afterAgentResponse",
    "afterAgentThought",
)
# Added through the 2.x line (a build of January 2026 still rejected sessionStart as an
# unknown hook type): registered with `--all-events` only.
NEWER_EVENTS = (
    "sessionStart",
    "sessionEnd",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "preCompact",
)
# postToolUse reports every tool call, these included, and Cursor fires both for one
# action with different ids: one action would be recorded twice. So these three stand in
# for postToolUse where it is not registered, and go when it is.
_ALSO_POST_TOOL_USE = "postToolUse reports the same {} (with its input); Cursor fires both"
REPLACED_BY_POST_TOOL_USE = {
    "afterShellExecution": _ALSO_POST_TOOL_USE.format("shell command and its output"),
    "afterMCPExecution": _ALSO_POST_TOOL_USE.format("MCP call and its result"),
    "afterFileEdit": _ALSO_POST_TOOL_USE.format("agent edit") + "; Tab edits are not agent work",
}
# The order events are written in.
_ORDER = (
    "sessionStart",
    "sessionEnd",
    "beforeSubmitPrompt",
    "postToolUse",
    "postToolUseFailure",
    "afterShellExecution",
    "afterMCPExecution",
    "afterFileEdit",
    "subagentStart",
    "subagentStop",
    "preCompact",
    "stop",
    "afterAgentResponse",
    "afterAgentThought",
)
# Cursor waits for these before the tool runs, and a permission answer from memvault could
# stand in for the user's own approval; the tool's outcome arrives in its after-hook anyway.
_BEFORE_THE_TOOL = "runs before the tool, which waits for it; the outcome comes in its after-hook"
NOT_REGISTERED = {
    "preToolUse": _BEFORE_THE_TOOL,
    "beforeShellExecution": _BEFORE_THE_TOOL,
    "beforeMCPExecution": _BEFORE_THE_TOOL,
    "beforeReadFile": _BEFORE_THE_TOOL + " (postToolUse reports reads)",
    "beforeTabFileRead": "Tab (inline completion) work, not the agent's",
    "afterTabFileEdit": "Tab (inline completion) work, not the agent's",
}


def events(*, all_events: bool) -> tuple[str, ...]:
    """The events memvault registers: the stable set, or with the newer ones as well."""
    if not all_events:
        return STABLE_EVENTS
    return tuple(e for e in _ORDER if e not in REPLACED_BY_POST_TOOL_USE)


RULE_FRONTMATTER = (
    "---\n"
    "description: memvault agent memory (read at task start, save fragments at task end,"
    " keep the session board)\n"
    "alwaysApply: true\n"
    "---\n"
)


def artifacts(
    root: Path, *, project: bool, commands: Commands, language: str, all_events: bool = False
) -> list[Artifact]:
    """The files Cursor reads under ``root`` (the home folder, or a project's folder)."""
    folder = root / ".cursor"
    found = [
        hooks_file(folder / "hooks.json", commands, events(all_events=all_events)),
        mcp_servers(folder / "mcp.json", commands),
    ]
    if project:
        rule_file = folder / "rules" / "memvault.mdc"
        found.append(rules.agent_rules(rule_file, language=language, header=RULE_FRONTMATTER))
    return found


def hooks_file(path: Path, commands: Commands, registered: tuple[str, ...]) -> Artifact:
    """memvault's handler under each of ``registered``, and under no other event."""
    entry = {"command": commands.hook_command(HOST), "timeout": TIMEOUT_SECONDS}

    def put(data: bytes | None) -> bytes:
        document, style = load_json(path, data)
        version = document.get("version", 1)
        if version != 1:
            raise ConfigError(
                f'{path} has "version": {version!r}; memvault knows version 1 only. '
                "Nothing was changed."
            )
        hooks = _hooks(path, document)
        before = copy.deepcopy(document)
        for event in registered:
            handlers = expect(path, hooks.setdefault(event, []), list, f'"hooks.{event}"')
            _place(handlers, entry)
        _strip(hooks, keep=registered)  # what an install with other events left
        if document == before and "version" in document and data is not None:
            return data
        return _dump(style, document if "version" in document else {"version": 1, **document})

    def take(data: bytes) -> Stripped:
        document, style = load_json(path, data)
        hooks = _hooks(path, document)
        if not _strip(hooks):
            return Stripped(data, empty=False)
        empty = not hooks and set(document) <= {"version", "hooks"}
        return Stripped(_dump(style, document), empty=empty)

    return Artifact(path, "hooks", put, take, private=True)


def _dump(style: JsonStyle, document: dict[str, Any]) -> bytes:
    """``document`` as JSON without ``//`` anywhere: Cursor strips comments with a naive
    ``//…$`` pattern, so a ``http://`` in a string would cut the file. ``\\/`` is JSON's
    own escape for ``/`` (and ``/`` occurs in JSON text only inside strings)."""
    return re.sub(rb"/{2,}", lambda m: b"\\/" * len(m.group()), style.dump(document))


def _hooks(path: Path, document: dict[str, Any]) -> dict[str, Any]:
    return expect(path, document.setdefault("hooks", {}), dict, '"hooks"')


def _place(handlers: list[Any], entry: dict[str, Any]) -> None:
    """Make ``entry`` memvault's only handler in the list, where the first one was."""
    ours = [i for i, h in enumerate(handlers) if isinstance(h, dict) and _ours(h)]
    if not ours:
        handlers.append(entry)
        return
    handlers[ours[0]] = entry
    for i in reversed(ours[1:]):
        del handlers[i]


def _ours(handler: dict[str, Any]) -> bool:
    return is_memvault_hook(handler.get("command"))


def _strip(hooks: dict[str, Any], keep: tuple[str, ...] = ()) -> bool:
    """Take memvault's handlers out of every event but ``keep``; an event left with no
    handler goes too (an empty key still makes an older build reject the file)."""
    return strip_events(hooks, keep, _without_ours)


def _without_ours(handlers: list[Any]) -> list[Any] | None:
    kept = [h for h in handlers if not (isinstance(h, dict) and _ours(h))]
    return None if len(kept) == len(handlers) else kept
