"""Claude Code: hooks in ``settings.json``, the MCP server, rules in ``CLAUDE.md``.

User scope: ``~/.claude/settings.json``, ``mcpServers`` in ``~/.claude.json`` (what
``claude mcp add --scope user`` edits) and ``~/.claude/CLAUDE.md``. Project scope:
``<project>/.claude/settings.json``, ``<project>/.mcp.json`` and ``<project>/CLAUDE.md``.
The rules go between ``<!-- memvault:begin -->`` and ``<!-- memvault:end -->`` so the
user's own text around them is never touched.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from memvault.install import rules
from memvault.install.commands import Commands, is_memvault_hook, mcp_servers, strip_events
from memvault.install.files import Artifact, Stripped, expect, load_json

HOST = "claude-code"
TIMEOUT_SECONDS = 10

# Claude Code skips a whole settings.json, the user's other settings included, when it
# names an event the running build does not know. The default is the "classic nine",
# stable since 2025; memvault uses all nine.
STABLE_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "SubagentStop",
    "PreCompact",
    "Stop",
    "SessionEnd",
)
# Newer (builds of 2026): registered with `--all-events` only.
NEWER_EVENTS = ("PostToolUseFailure", "SubagentStart")
_ORDER = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "Stop",
    "SessionEnd",
)
# The hook reads memory before a tool only for the file tools, and every handler of a
# PreToolUse delays the tool: the others need not wait for it (their outcome arrives as
# PostToolUse). Letters and `|` only: Claude Code takes it as a list of exact tool names.
FILE_TOOLS = "Edit|Write|MultiEdit|NotebookEdit|Read"
MATCHERS = {"PreToolUse": FILE_TOOLS}

# Events Claude Code has that memvault leaves alone, and why.
NOT_REGISTERED = {
    "PermissionRequest": "a permission prompt; the tool call itself arrives as PreToolUse",
    "StopFailure": "too new: older builds reject the whole settings.json for it",
    "InstructionsLoaded": "too new, and which instruction files loaded is not memory",
}


def events(*, all_events: bool) -> tuple[str, ...]:
    """The events memvault registers: the stable set, or with the newer ones as well."""
    if not all_events:
        return STABLE_EVENTS
    return _ORDER


def artifacts(
    root: Path, *, project: bool, commands: Commands, language: str, all_events: bool = False
) -> list[Artifact]:
    """The files Claude Code reads for ``root`` (the home folder, or a project's folder)."""
    mcp_config = root / ".mcp.json" if project else root / ".claude.json"
    rules_file = root / "CLAUDE.md" if project else root / ".claude" / "CLAUDE.md"
    return [
        settings_file(root / ".claude" / "settings.json", commands, events(all_events=all_events)),
        mcp_servers(mcp_config, commands),
        rules.agent_rules(rules_file, language=language),
    ]


def settings_file(path: Path, commands: Commands, registered: tuple[str, ...]) -> Artifact:
    """memvault's group under each of ``registered``, and under no other event."""
    handler = {
        "type": "command",
        "command": commands.hook_command(HOST),
        "timeout": TIMEOUT_SECONDS,
    }

    def put(data: bytes | None) -> bytes:
        document, style = load_json(path, data)
        hooks = expect(path, document.setdefault("hooks", {}), dict, '"hooks"')
        before = copy.deepcopy(document)
        for event in registered:
            groups = expect(path, hooks.setdefault(event, []), list, f'"hooks.{event}"')
            _place(path, event, groups, handler, MATCHERS.get(event))
        _strip(hooks, keep=registered)  # what an install with other events left
        if document == before and data is not None:
            return data
        return style.dump(document)

    def take(data: bytes) -> Stripped:
        document, style = load_json(path, data)
        hooks = document.get("hooks")
        if not isinstance(hooks, dict) or not _strip(hooks):
            return Stripped(data, empty=False)
        if not hooks:
            del document["hooks"]
        return Stripped(style.dump(document), empty=not document)

    return Artifact(path, "hooks", put, take, private=True)


def _group(handler: dict[str, Any], matcher: str | None, rest: dict[str, Any]) -> dict[str, Any]:
    """A matcher group holding ``handler`` alone; ``rest``: other keys the group had."""
    group = {"matcher": matcher} if matcher else {}
    group.update((k, v) for k, v in rest.items() if k not in ("matcher", "hooks"))
    group["hooks"] = [handler]
    return group


def _same_tools(a: object, b: str | None) -> bool:
    every = (None, "", "*")
    return a == b or (a in every and b in every)


def _place(
    path: Path, event: str, groups: list[Any], handler: dict[str, Any], matcher: str | None
) -> None:
    """Make ``handler`` memvault's only one for the event, where the first one was, in a
    group whose matcher is ``matcher`` (None: every tool, every source)."""
    ours = []
    for g, group in enumerate(groups):
        group = expect(path, group, dict, f'"hooks.{event}[{g}]"')
        handlers = expect(path, group.get("hooks", []), list, f'"hooks.{event}[{g}].hooks"')
        ours += [(g, h) for h, item in enumerate(handlers) if _ours(item)]
    if not ours:
        groups.append(_group(handler, matcher, {}))
        return
    (g, h), extra = ours[0], ours[1:]
    for eg, eh in reversed(extra):
        del groups[eg]["hooks"][eh]
        if not groups[eg]["hooks"]:
            del groups[eg]
    group = groups[g]
    if len(group["hooks"]) == 1:  # memvault's own group
        groups[g] = _group(handler, matcher, group)
    elif _same_tools(group.get("matcher"), matcher):  # shared, and for the right tools
        group["hooks"][h] = handler
    else:  # shared with handlers of the user's that want other tools: move out, beside
        del group["hooks"][h]
        groups.insert(g + 1, _group(handler, matcher, {}))


def _ours(handler: object) -> bool:
    return isinstance(handler, dict) and is_memvault_hook(handler.get("command"))


def _strip(hooks: dict[str, Any], keep: tuple[str, ...] = ()) -> bool:
    """Take memvault's handlers out of every event but ``keep``; a group or an event left
    empty goes too (an empty key still makes an older build skip the file)."""
    return strip_events(hooks, keep, _groups_without_ours)


def _groups_without_ours(groups: list[Any]) -> list[Any] | None:
    kept_groups, touched = [], False
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list) or not any(_ours(h) for h in handlers):
            kept_groups.append(group)
            continue
        touched = True
        kept = [h for h in handlers if not _ours(h)]
        if kept:
            kept_groups.append({**group, "hooks": kept})
    return kept_groups if touched else None
