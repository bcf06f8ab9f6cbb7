"""Cursor: ``hooks.json`` (version 1), ``mcp.json`` and a project rule.

User scope writes ``~/.cursor/hooks.json`` and ``~/.cursor/mcp.json``. Cursor keeps user
rules in its settings, not in a file, so the agent rules are installed only for a project,
as ``<project>/.cursor/rules/memvault.mdc``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memvault.install import rules
from memvault.install.commands import Commands, is_memvault_hook, mcp_servers
from memvault.install.files import (
    Artifact,
    ConfigError,
    Stripped,
    drop_block,
    expect,
    load_json,
    put_block,
)

HOST = "cursor"
TIMEOUT_SECONDS = 10

# The agent events memvault records. Cursor rejects a hooks.json with a key it does not
# know, so nothing undocumented (workspaceOpen) goes in; Tab events are left out because
# inline completions are not agent work worth remembering.
EVENTS = (
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
}

RULE_FRONTMATTER = (
    "---\n"
    "description: memvault agent memory (read at task start, save fragments at task end,"
    " keep the session board)\n"
    "alwaysApply: true\n"
    "---\n"
)


def artifacts(root: Path, *, project: bool, commands: Commands) -> list[Artifact]:
    """The files Cursor reads under ``root`` (the home folder, or a project's folder)."""
    folder = root / ".cursor"
    found = [
        hooks_file(folder / "hooks.json", commands),
        mcp_servers(folder / "mcp.json", commands),
    ]
    if project:
        found.append(rule_file(folder / "rules" / "memvault.mdc"))
    return found


def hooks_file(path: Path, commands: Commands) -> Artifact:
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
        changed = "version" not in document
        for event in EVENTS:
            handlers = expect(path, hooks.setdefault(event, []), list, f'"hooks.{event}"')
            changed |= _place(handlers, entry)
        if not changed and data is not None:
            return data
        return style.dump(document if "version" in document else {"version": 1, **document})

    def take(data: bytes) -> Stripped:
        document, style = load_json(path, data)
        hooks = _hooks(path, document)
        if not _strip(hooks):
            return Stripped(data, empty=False)
        empty = not hooks and set(document) <= {"version", "hooks"}
        return Stripped(style.dump(document), empty=empty)

    return Artifact(path, "hooks", put, take)


def _hooks(path: Path, document: dict[str, Any]) -> dict[str, Any]:
    return expect(path, document.setdefault("hooks", {}), dict, '"hooks"')


def _place(handlers: list[Any], entry: dict[str, Any]) -> bool:
    """Make ``entry`` memvault's only handler in the list, where the first one was."""
    ours = [i for i, h in enumerate(handlers) if isinstance(h, dict) and _ours(h)]
    if not ours:
        handlers.append(entry)
        return True
    if len(ours) == 1 and handlers[ours[0]] == entry:
        return False
    handlers[ours[0]] = entry
    for i in reversed(ours[1:]):
        del handlers[i]
    return True


def _ours(handler: dict[str, Any]) -> bool:
    return is_memvault_hook(handler.get("command"))


def _strip(hooks: dict[str, Any]) -> bool:
    removed = False
    for event in list(hooks):
        handlers = hooks[event]
        if not isinstance(handlers, list):
            continue
        kept = [h for h in handlers if not (isinstance(h, dict) and _ours(h))]
        if len(kept) == len(handlers):
            continue
        removed = True
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return removed


def rule_file(path: Path) -> Artifact:
    def put(data: bytes | None) -> bytes:
        if data is None:
            return put_block(path, RULE_FRONTMATTER.encode("utf-8"), rules.render())
        return put_block(path, data, rules.render())

    def take(data: bytes) -> Stripped:
        text = drop_block(path, data)
        return Stripped(text.encode("utf-8"), empty=text.strip() in ("", RULE_FRONTMATTER.strip()))

    return Artifact(path, "agent rules", put, take)
