"""Claude Code: hooks in ``settings.json``, the MCP server, rules in ``CLAUDE.md``.

User scope: ``~/.claude/settings.json``, ``mcpServers`` in ``~/.claude.json`` (what
``claude mcp add --scope user`` edits) and ``~/.claude/CLAUDE.md``. Project scope:
``<project>/.claude/settings.json``, ``<project>/.mcp.json`` and ``<project>/CLAUDE.md``.
The rules go between ``<!-- memvault:begin -->`` and ``<!-- memvault:end -->`` so the
user's own text around them is never touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memvault.install import rules
from memvault.install.commands import Commands, is_memvault_hook, mcp_servers
from memvault.install.files import Artifact, Stripped, drop_block, expect, load_json, put_block

HOST = "claude-code"
TIMEOUT_SECONDS = 10

EVENTS = (
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

# Events Claude Code has that memvault leaves alone, and why. Claude Code skips a whole
# settings.json, the user's other settings included, when it names an event the running
# build does not know, so newer events go in only once they are worth that risk.
NOT_REGISTERED = {
    "PermissionRequest": "a permission prompt; the tool call itself arrives as PreToolUse",
    "StopFailure": "too new: older builds reject the whole settings.json for it",
    "InstructionsLoaded": "too new, and which instruction files loaded is not memory",
}


def artifacts(root: Path, *, project: bool, commands: Commands) -> list[Artifact]:
    """The files Claude Code reads for ``root`` (the home folder, or a project's folder)."""
    mcp_config = root / ".mcp.json" if project else root / ".claude.json"
    rules_file = root / "CLAUDE.md" if project else root / ".claude" / "CLAUDE.md"
    return [
        settings_file(root / ".claude" / "settings.json", commands),
        mcp_servers(mcp_config, commands),
        rules_file_artifact(rules_file),
    ]


def settings_file(path: Path, commands: Commands) -> Artifact:
    handler = {
        "type": "command",
        "command": commands.hook_command(HOST),
        "timeout": TIMEOUT_SECONDS,
    }

    def put(data: bytes | None) -> bytes:
        document, style = load_json(path, data)
        hooks = expect(path, document.setdefault("hooks", {}), dict, '"hooks"')
        changed = False
        for event in EVENTS:
            groups = expect(path, hooks.setdefault(event, []), list, f'"hooks.{event}"')
            changed |= _place(path, event, groups, handler)
        if not changed and data is not None:
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

    return Artifact(path, "hooks", put, take)


def _place(path: Path, event: str, groups: list[Any], handler: dict[str, Any]) -> bool:
    """Make ``handler`` memvault's only one for the event, where the first one was."""
    ours = []
    for g, group in enumerate(groups):
        group = expect(path, group, dict, f'"hooks.{event}[{g}]"')
        handlers = expect(path, group.get("hooks", []), list, f'"hooks.{event}[{g}].hooks"')
        ours += [(g, h) for h, item in enumerate(handlers) if _ours(item)]
    if not ours:
        groups.append({"hooks": [handler]})
        return True
    (g, h), extra = ours[0], ours[1:]
    if not extra and groups[g]["hooks"][h] == handler:
        return False
    groups[g]["hooks"][h] = handler
    for g, h in reversed(extra):
        del groups[g]["hooks"][h]
        if not groups[g]["hooks"]:
            del groups[g]
    return True


def _ours(handler: object) -> bool:
    return isinstance(handler, dict) and is_memvault_hook(handler.get("command"))


def _strip(hooks: dict[str, Any]) -> bool:
    removed = False
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
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
        if touched:
            removed = True
            if kept_groups:
                hooks[event] = kept_groups
            else:
                del hooks[event]
    return removed


def rules_file_artifact(path: Path) -> Artifact:
    def put(data: bytes | None) -> bytes:
        return put_block(path, data, rules.render())

    def take(data: bytes) -> Stripped:
        text = drop_block(path, data)
        return Stripped(text.encode("utf-8"), empty=not text.strip())

    return Artifact(path, "agent rules", put, take)
