"""Helpers the install tests share."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests.helpers import fixtures_dir


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``root``, with file contents: a byte-exact picture."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def read_json(path: Path) -> dict:
    return json.loads(path.read_text("utf-8"))


def fixture_events(host: str) -> set[str]:
    """Every hook event name in the recorded payloads of ``host``."""
    events = set()
    for recording in sorted((fixtures_dir() / host / "hooks").glob("*.jsonl")):
        for line in recording.read_text("utf-8").splitlines():
            if line.strip():
                events.add(json.loads(line)["hook_event_name"])
    return events


def hook_commands(handlers: list) -> list[str]:
    return [h["command"] for h in handlers if "memvault-hook" in h.get("command", "")]


def split_hook(command: str) -> tuple[dict[str, str], str, str]:
    """A hook entry's command line as (the ``NAME=value`` words before it, program, host)."""
    words = shlex.split(command)
    pinned = {}
    while "=" in words[0] and not words[0].startswith("/"):
        name, value = words.pop(0).split("=", 1)
        pinned[name] = value
    program, host = words
    return pinned, program, host


def registered(hooks: dict) -> set[str]:
    """The events with a memvault handler, in a hooks.json or settings.json ``hooks``."""
    found = set()
    for event, entries in hooks.items():
        handlers = [h for e in entries for h in e.get("hooks", [e])]
        if hook_commands(handlers):
            found.add(event)
    return found
